-- broken: a syntax error
for i = 1, do
