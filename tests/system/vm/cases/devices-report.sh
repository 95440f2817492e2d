# Run by box/probe and box/plain (devices.yaml): makes character device
# nodes in a directory of its own and opens each for reading and writing,
# one line each: "NAME ok", "NAME <error>" or "NAME mknod <error>".
directory=$(mktemp -d)
probe() { # NAME MAJOR MINOR
	if ! error=$(mknod "$directory/$1" c "$2" "$3" 2>&1); then
		echo "$1 mknod ${error##*: }"
		return
	fi
	# A failed redirection of a plain command fails the command only.
	if error=$( { true <>"$directory/$1"; } 2>&1 ); then
		echo "$1 ok"
	else
		echo "$1 ${error##*: }"
	fi
	rm "$directory/$1"
}
probe null 1 3
probe zero 1 5
probe urandom 1 9
probe console 5 1  # configured for box/probe
probe ttyS0 4 64   # the serial port: in no list
rmdir "$directory"
echo "report done"
