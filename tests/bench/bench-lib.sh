# bench-lib.sh — helpers the callgrind benchmarks share (sourced by
# bench-workloads.sh and bench-event-queue.sh).

# json_field FILE KEY: KEY of the first workload in an `iosim bench --json` file.
json_field () {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["workloads"][0][sys.argv[2]])' "$1" "$2"
}

# callgrind_ir FILE: the total of the Ir events in a callgrind output file.
callgrind_ir () {
  awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

# median VALUE...: the median (the lower middle one of an even count).
median () {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
