# tools/bench/: the PyTorch side of the GPU race (torch_clip.py, checked on the CPU when torch is
# there) and tools/bench/gpu_race.sh, which races it against `make bench-gpu` on a GPU.
SCRIPT_TESTS += tests/test_torch_clip.sh

.PHONY: gpu-race
gpu-race: all
	bash tools/bench/gpu_race.sh
