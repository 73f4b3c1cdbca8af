# sweep-compare.sh — sourced by the cluster sweep tests (parallel-sweep.sh,
# slurm-sweep.sh).
#
# sweep_files_compare LOCAL OTHER WHAT: compare the four files a sweep
# writes (results and summary, CSV and JSON) in directory LOCAL with those
# in OTHER, byte for byte, printing a line for each; WHAT names OTHER in a
# failure ("the Slurm job").  Returns 0 when all four are identical.
sweep_files_compare () {
  local local_dir=$1 other_dir=$2 what=$3 status=0 f
  for f in results.csv summary.csv results.json summary.json; do
    if cmp "$local_dir/$f" "$other_dir/$f"; then
      echo "ok: $f identical ($(wc -l < "$local_dir/$f") lines)"
    else
      echo "FAIL: $f differs between the local run and $what"
      status=1
    fi
  done
  return $status
}
