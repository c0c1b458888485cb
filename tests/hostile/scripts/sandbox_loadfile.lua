loadfile("/etc/passwd")
