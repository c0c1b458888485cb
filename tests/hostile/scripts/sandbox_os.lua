os.execute("touch /tmp/commsim-hostile-escaped")
