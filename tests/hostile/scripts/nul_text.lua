-- a NUL in printed text and in an error message: what follows it is kept
print("before\0after")
error("err\0tail")
