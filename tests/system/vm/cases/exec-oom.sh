# Execs a memory hog (awk doubling a string to 128M, as memory-hog.sh) into
# mem/app, says the exec's exit, stops mem/app, then shuts the machine down.
sleep 1
/corral exec mem/app -- awk 'BEGIN { s = "x"; for (i = 0; i < 27; i++) s = s s; print "survived" }'
echo "exec exit $?"
/corral stop mem/app
echo "stopped mem/app"
kill -TERM 1
