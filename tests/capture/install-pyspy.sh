#!/bin/sh
# install-pyspy.sh VENV: PyPI's py-spy into a venv of the build (make deps),
# where `ncclwatch attach` finds it (<bin>/../venv/bin/py-spy; make install
# copies it to PREFIX/libexec/ncclwatch/). Nothing to
# do if it is there; a failed install is one line, not an error: attach
# then takes native stacks only and says so.
set -u
venv=$1
PYSPY_VERSION=0.4.3
[ -x "$venv/bin/py-spy" ] && exit 0
# Debian's python3 (python3-venv, make deps) first, else whatever python3 is first in PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if "$py" -m venv "$venv" >/dev/null 2>&1 && "$venv/bin/pip" install -q "py-spy==$PYSPY_VERSION" >/dev/null 2>&1; then
	echo "py-spy $PYSPY_VERSION installed in $venv"
else
	echo "py-spy could not be installed in $venv (ncclwatch attach: native stacks only)"
fi
exit 0
