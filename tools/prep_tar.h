// Webdataset tar shard indexer of tools/prep: finds each key's image member (jpg, jpeg,
// png, webp) and caption member (txt) and records the image's byte offset and length.
#ifndef TOOLS_PREP_TAR_H
#define TOOLS_PREP_TAR_H
// defines: PrepTarImage, PrepTarIndex, prep_tar_index, prep_tar_check_images, prep_tar_free

#include "prep_annot.h" // defines: PrepAnnotList (its problems list collects the reports)

#include <stdint.h>

typedef struct {
	char *key;
	uint64_t offset, length; // image data in the tar
	char *caption;           // valid UTF-8
} PrepTarImage;

typedef struct {
	PrepTarImage *img;
	size_t n, cap;
	uint64_t size; // bytes of the tar file
} PrepTarIndex;

// Scans path; keys without an image or a caption, captions that are not UTF-8 and a
// truncated tail are reported into rep (and counted), the rest indexed. Returns 0 or -errno.
int prep_tar_index(const char *path, PrepTarIndex *out, PrepAnnotList *rep);
// Decodes every indexed image of path (the loader's decoder, ld_image_load) and drops the ones
// that do not decode cleanly from t, one report line each. Returns how many were dropped, or -errno.
int prep_tar_check_images(const char *path, PrepTarIndex *t, PrepAnnotList *rep);
void prep_tar_free(PrepTarIndex *t);

#endif
