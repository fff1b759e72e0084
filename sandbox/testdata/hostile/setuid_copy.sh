# Makes a setuid copy of a binary in the workspace.
cp /usr/bin/id ./suid-id && chmod 4755 ./suid-id; ls -l ./suid-id
install -m 4755 /usr/bin/id ./suid-id2; ls -l ./suid-id2
