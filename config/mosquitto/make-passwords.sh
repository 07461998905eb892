#!/bin/sh
# The broker's password file: one random password a user, hashed by mosquitto_passwd
# into FILE; each clear password is written once to FILE.d/USER (mode 0600) to be given
# to that board (its [mqtt] password_file) or to the station, then deleted from here.
#
#   ./make-passwords.sh /etc/mosquitto/board-ctl.passwd arbiter observer b01 b02 b03
#
# Run again with more users to add them (existing ones keep their passwords).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 PASSWORD_FILE USER..." >&2
    exit 2
fi
file=$1
shift
umask 077
mkdir -p "$file.d"
touch "$file"
for user in "$@"; do
    case $user in
        *[!A-Za-z0-9_-]*|'') echo "$0: bad user name $user (letters, digits, _ and - only)" >&2; exit 2;;
    esac
    if grep -q "^$user:" "$file"; then
        echo "$user: already in $file, kept"
        continue
    fi
    password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
    mosquitto_passwd -b "$file" "$user" "$password"
    printf '%s\n' "$password" > "$file.d/$user"
    echo "$user: password in $file.d/$user"
done
# mosquitto reads the file as its own user
chown mosquitto: "$file" 2>/dev/null || true
