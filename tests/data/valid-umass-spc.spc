0,303567,3584,w,0.000000
0,55590,3072,w,0.000000
1 , 1235, 512 , R , 0.000251
 2,0,4096,W,0.012345,extra,fields
0,303567,1000,r,1.5
# The SPC format (UMass Trace Repository): ASU,LBA,Size,Opcode,Timestamp.
# First line as Financial1's, quoted by several simulators; blanks around
# fields, upper-case opcodes and trailing fields as SPC 1.0.1 allows.
# expect-format: umass-spc
# expect-records: 5
