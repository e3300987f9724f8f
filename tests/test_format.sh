#!/usr/bin/env bash
# Every C, C++ and CUDA file is in the style .clang-format writes down (make format fixes it);
# 77 where clang-format 14 is missing, since other versions format some constructs differently.
exec bash "$(dirname "$0")/../mk/format.sh" --check
