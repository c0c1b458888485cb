-- control characters in printed text and in an error message
print("a\tb\27[2Jc\7d\194\155e")
error("x\27]0;title\7y")
