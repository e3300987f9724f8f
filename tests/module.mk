# tests/: the runner make test uses (tests/run.sh) has a test of its own
SCRIPT_TESTS += tests/test_run_sh.sh
