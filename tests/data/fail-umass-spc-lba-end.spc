0,303567,3584,w,0.000000
0,36028797018963967,4096,w,0.000100
# expect-error-line: 2
# expect-error-contains: 64-bit byte range
