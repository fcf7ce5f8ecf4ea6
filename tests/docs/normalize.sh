#!/bin/sh
# Reads a verdict gallery (Markdown, tests/docs/gallery.sh) and prints what
# must not change between two runs of the same cases: everything but the
# stack groups (which frame a waiting thread is caught in varies), with
# the values that do vary blanked: communicator ids, addresses, ages and
# durations, pids, and how many earlier ops a sticky GPU error also marked.
awk '
	/^```/ { inblock = !inblock; stacks = 0; print; next }
	inblock && /^stacks/ { stacks = 1; print "stacks ..."; next }
	inblock && stacks { next }
	{ print }' "$@" |
sed -E 's/[0-9a-f]{16}/<id>/g
	s/0x[0-9a-f]+/<addr>/g
	s/[0-9]+(\.[0-9]+)?(-[0-9]+(\.[0-9]+)?)? (s|ms|min)\b/<t>/g
	s/pid[ =][0-9]+/pid <pid>/g
	s/[0-9]+ earlier ops? marked/<n> earlier ops marked/g'
