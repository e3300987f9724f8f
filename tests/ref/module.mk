# tests/ref/: host twins the tests check device ops against (linked by tests only, never by a
# program): FastCLIP's loss pieces, tables and temperature step in double (fastclipref), and the
# host augmentation (augmentref) that kern_augment reproduces bit for bit.
LIBS += fastclipref augmentref
fastclipref_SRCS := tests/ref/fastclip_ref_loss.c tests/ref/fastclip_ref_openclip.c tests/ref/fastclip_ref_tables.c \
                    tests/ref/fastclip_ref_temp.c
augmentref_SRCS := tests/ref/augment_ref.c

# the twins' own checks against hand-computed values
TESTS += test_ref_augment
test_ref_augment_LIBS := augmentref stream common
