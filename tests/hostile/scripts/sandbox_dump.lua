local s = string.dump(print)
