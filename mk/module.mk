# mk/: the build itself. Its test: `make help` names every target the Makefile and the
# fragments declare.
SCRIPT_TESTS += tests/test_make_help.sh
