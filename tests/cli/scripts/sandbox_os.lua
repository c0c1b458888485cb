--- world: 1
os.execute("touch /tmp/commsim-escaped")
