# mk/: the build itself. Its test: `make help` names every target the Makefile and the
# fragments declare.
SCRIPT_TESTS += tests/test_make_help.sh
# a fresh machine, simulated: building goals install missing packages before a fragment can stop
# the parse (make test-fresh is the real one)
SCRIPT_TESTS += tests/test_deps_first.sh
# an archive follows its source list (a source added whose object already exists gets in)
SCRIPT_TESTS += tests/test_make_archive_list.sh tests/test_make_san_stamp.sh tests/test_make_folded_header.sh tests/test_mirror_stale.sh
# cuDNN and NCCL found outside the toolkit: in a Python wheel's folders (.so.9 only), with an rpath
SCRIPT_TESTS += tests/test_detect_cuda_libs.sh
# the code style: .clang-format over every C/C++/CUDA file (mk/format.sh)
SCRIPT_TESTS += tests/test_format.sh
.PHONY: format
format:
	@bash mk/format.sh
