#!/usr/bin/env bash
# Builds the Debian package with `cargo deb`, installs it with dpkg, checks what it installed
# and runs, then purges it: the machine is left as it was. Needs root, cargo-deb, systemd
# (for systemd-analyze; systemd need not be running: this works in a container) and man-db.
# .ci/run runs it after the tests; by hand: `sudo packaging/deb-check.sh` from a checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "deb-check: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "run as root: it installs and purges the package"
# A package installed here by someone else would be replaced and then purged: refuse.
if dpkg-query -W -f '${db:Status-Status}' llmtail 2>/dev/null | grep -qv '^not-installed$'; then
  fail "llmtail is already installed (dpkg -l llmtail); remove it first"
fi

echo "== cargo deb"
# cargo deb prints the package's path as the last line of its standard output.
deb=$(cargo deb | tail -n 1)
[ -f "$deb" ] || fail "cargo deb made no package (got: $deb)"
echo "$deb"

installed=
cleanup() {
  if [ -n "$installed" ]; then
    echo "== dpkg --purge llmtail (leaving the machine as it was)"
    dpkg --purge llmtail >/dev/null
  fi
}
trap cleanup EXIT

echo "== dpkg -i"
installed=1
dpkg -i "$deb"

echo "== llmtail --version"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
got=$(llmtail --version)
echo "$got"
[ "$got" = "llmtail $version" ] || fail "llmtail --version says \"$got\", not \"llmtail $version\""
[ "$(command -v llmtail)" = /usr/bin/llmtail ] || fail "llmtail on PATH is $(command -v llmtail), not /usr/bin/llmtail"
# cargo deb's $auto finds the libc version through dpkg-shlibdeps (dpkg-dev); without it the
# package would install where the binary cannot run.
depends=$(dpkg-query -W -f '${Depends}' llmtail)
echo "Depends: $depends"
grep -q 'libc6 (>= ' <<<"$depends" || fail "Depends names no libc6 version: is dpkg-dev installed?"

echo "== the files installed (dpkg -L llmtail)"
files=$(dpkg -L llmtail)
while IFS= read -r path; do
  [ -d "$path" ] || echo "$path"
done <<<"$files"
unit=/usr/lib/systemd/system/llmtail.service
expected=(/usr/bin/llmtail "$unit" /etc/llmtail/llmtail.toml /usr/share/man/man1/llmtail.1.gz /usr/share/man/man1/llmtail-replay.1.gz)
# Every alert file and dashboard in the tree (not the script that writes the dashboards),
# found here rather than listed, so that a new one left out of [package.metadata.deb] assets
# fails the check.
for dir in alerts dashboards; do
  [ -d "$dir" ] || continue
  while IFS= read -r -d '' file; do
    grep -qxF "/usr/share/llmtail/$file" <<<"$files" ||
      fail "the package lacks /usr/share/llmtail/$file (Cargo.toml, [package.metadata.deb] assets)"
    cmp "$file" "/usr/share/llmtail/$file" || fail "/usr/share/llmtail/$file differs from $file"
  done < <(find "$dir" -type f \( -name '*.json' -o -name '*.yml' \) -print0)
done
for path in "${expected[@]}"; do
  grep -qxF "$path" <<<"$files" || fail "the package lacks $path (Cargo.toml, [package.metadata.deb] assets)"
done
cmp packaging/llmtail.service "$unit" || fail "$unit differs from packaging/llmtail.service"
cmp packaging/llmtail.toml /etc/llmtail/llmtail.toml || fail "/etc/llmtail/llmtail.toml differs from packaging/llmtail.toml"
dpkg-query --control-show llmtail conffiles | grep -qx /etc/llmtail/llmtail.toml ||
  fail "/etc/llmtail/llmtail.toml is not a conffile: an upgrade would overwrite the user's edits"

echo "== the unit: systemd-analyze verify, security; installed, not enabled"
# cargo-deb's generated scripts (deb-systemd-helper, daemon-reload, restart on upgrade).
for script in postinst prerm postrm; do
  dpkg-query --control-list llmtail | grep -qx "$script" || fail "the package has no $script: maintainer-scripts unset?"
done
verify=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify $unit: $verify"
[ -z "$verify" ] || fail "systemd-analyze verify $unit: $verify"
systemd-analyze security --offline=true "$unit" | tail -n 1
# `systemctl is-enabled` reads the unit files, so it answers without systemd running.
enabled=$(systemctl is-enabled llmtail.service 2>&1 || true)
[ "$enabled" = disabled ] || fail "systemctl is-enabled llmtail.service says \"$enabled\", not disabled"

echo "== a 0640 root:adm log, read as the unit runs the binary"
# systemd need not run here, so the unit's user and groups are taken as it would give them:
# DynamicUser=yes picks an unnamed uid from 61184-65519, SupplementaryGroups adds its groups.
groups=$(sed -n 's/^SupplementaryGroups=//p' "$unit" | tr ' ' ',')
[ -n "$groups" ] || fail "$unit has no SupplementaryGroups: a 0640 root:adm log is unreadable to it"
logdir=$(mktemp -d)
chmod 0755 "$logdir"
cp fixtures/replay/vllm-0.8.4-v1-tp2.log "$logdir/vllm.log"
chown root:adm "$logdir/vllm.log"
chmod 0640 "$logdir/vllm.log"
as_unit() {
  setpriv --reuid=61184 --regid=61184 "$@" --inh-caps=-all -- \
    /usr/bin/llmtail --one-shot --log "$logdir/vllm.log"
}
metrics=$(as_unit --groups="$groups" 2>&1) || fail "the unit's user with groups $groups cannot read a 0640 root:adm log:"$'\n'"$metrics"
grep -q '^vllm:num_requests_running' <<<"$metrics" || fail "no vllm series read from the root:adm log:"$'\n'"$metrics"
# The same user without the groups is refused: the groups, not a loose mode, did it.
if denied=$(as_unit --clear-groups 2>&1); then
  fail "the log was readable without the unit's groups; the check above proves nothing"
fi
grep -q 'Permission denied' <<<"$denied" || fail "expected a permission error without the groups:"$'\n'"$denied"
rm -r "$logdir"

echo "== the man page"
zcat /usr/share/man/man1/llmtail.1.gz | cmp - packaging/llmtail.1 || fail "the installed man page differs from packaging/llmtail.1"
zcat /usr/share/man/man1/llmtail-replay.1.gz | cmp - packaging/llmtail-replay.1 || fail "the installed man page differs from packaging/llmtail-replay.1"
# Neither justified (it widens spaces: "Exit  codes") nor hyphenated, so that the words
# looked for read as written.
page=$(MANWIDTH=100 man --nj --nh -l /usr/share/man/man1/llmtail.1.gz 2>&1)
for expected_text in "--web.listen-address" "Exit codes" "LLMTAIL_LOG"; do
  grep -qF -- "$expected_text" <<<"$page" || fail "man llmtail lacks \"$expected_text\":"$'\n'"$page"
done
[ "$(man -w llmtail)" = /usr/share/man/man1/llmtail.1.gz ] || fail "man -w llmtail finds $(man -w llmtail)"
replay_page=$(MANWIDTH=100 man --nj --nh -l /usr/share/man/man1/llmtail-replay.1.gz 2>&1)
grep -qF -- "promtool tsdb create-blocks-from openmetrics" <<<"$replay_page" || fail "man llmtail-replay lacks the promtool command:"$'\n'"$replay_page"

echo "== upgrade over itself: an edited conffile is kept"
echo "# edited by deb-check" >>/etc/llmtail/llmtail.toml
dpkg -i "$deb" >/dev/null
tail -n 1 /etc/llmtail/llmtail.toml | grep -qx "# edited by deb-check" || fail "reinstalling lost the edit to /etc/llmtail/llmtail.toml"

echo "== dpkg -r: the binary goes, the edited config stays"
dpkg -r llmtail >/dev/null
[ ! -e /usr/bin/llmtail ] && [ ! -e "$unit" ] || fail "dpkg -r left the binary or the unit"
[ -f /etc/llmtail/llmtail.toml ] || fail "dpkg -r removed the config file (only purge should)"

echo "== dpkg --purge: nothing left"
dpkg --purge llmtail >/dev/null
installed=
for path in /etc/llmtail /usr/share/llmtail /usr/share/doc/llmtail \
  /var/lib/systemd/deb-systemd-helper-enabled/llmtail.service.dsh-also \
  /var/lib/systemd/deb-systemd-helper-masked/llmtail.service \
  /etc/systemd/system/llmtail.service \
  /etc/systemd/system/multi-user.target.wants/llmtail.service; do
  # -L too: deb-systemd-helper's mask is a symlink to /dev/null.
  [ ! -e "$path" ] && [ ! -L "$path" ] || fail "purge left $path"
done
dpkg-query -W llmtail >/dev/null 2>&1 && fail "dpkg still knows llmtail after purge"
echo "deb-check: ok"
