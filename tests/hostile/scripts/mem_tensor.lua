local t = tensor.zeros(1 << 30)
