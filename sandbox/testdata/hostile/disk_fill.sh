# Writes $1 bytes into big.bin in the working directory.
head -c "$1" /dev/zero > big.bin
