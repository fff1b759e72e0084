# Writes $1 files of $2 KiB each into the current directory, or until a
# write fails; prints how many were written and, on failure, why.
i=0
while [ "$i" -lt "$1" ]; do
  if ! msg=$(head -c "$(( $2 * 1024 ))" /dev/zero 2>&1 >"f$i"); then
    echo "failed at $i: $msg"
    break
  fi
  i=$((i+1))
done
echo "wrote $i"
