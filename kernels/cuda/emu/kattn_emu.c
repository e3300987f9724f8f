// The attention selection (kattn.c) for the CUDA backend run through the execution shim: built
// without cuDNN, a library the shim does not emulate, so auto and own run the own kernels.
#undef HAVE_CUDNN
#include "../attn/kattn.c" // defines: kattn_create, kattn_fwd, kattn_bwd, kattn_ws_bytes, kattn_describe
