// ustar writer with fixed metadata (deterministic bytes for equal members) and the header
// checksum the tar reader verifies with the same function.
#include "tar.h" // defines: TarWriter, tar_header, tar_header_sum, tar_open, tar_add, tar_close

#include <errno.h>  // defines: EIO, EFBIG, ENAMETOOLONG, errno
#include <string.h> // defines: memcpy, memset, strlen

unsigned tar_header_sum(const unsigned char hdr[512])
{
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : hdr[i];
	return sum;
}

int tar_header(unsigned char hdr[512], const char *name, uint64_t len, char type)
{
	memset(hdr, 0, 512);
	size_t n = strlen(name);
	if (n >= 100)
		return -ENAMETOOLONG;
	if (len >= 1ull << 33) // 11 octal digits
		return -EFBIG;
	memcpy(hdr, name, n);
	snprintf((char *)hdr + 100, 8, "%07o", 0644);
	snprintf((char *)hdr + 108, 8, "%07o", 0);
	snprintf((char *)hdr + 116, 8, "%07o", 0);
	snprintf((char *)hdr + 124, 12, "%011llo", (unsigned long long)len);
	snprintf((char *)hdr + 136, 12, "%011o", 0);
	hdr[156] = (unsigned char)type;
	memcpy(hdr + 257, "ustar", 6);
	memcpy(hdr + 263, "00", 2);
	snprintf((char *)hdr + 148, 8, "%06o", tar_header_sum(hdr));
	hdr[155] = ' ';
	return 0;
}

int tar_open(TarWriter *t, const char *path)
{
	t->f = fopen(path, "wb");
	t->pos = 0;
	return t->f ? 0 : -errno;
}

int tar_add(TarWriter *t, const char *name, const void *data, size_t len, uint64_t *data_off)
{
	unsigned char hdr[512];
	int rc = tar_header(hdr, name, len, '0');
	if (rc)
		return rc;
	static const unsigned char zeros[512];
	size_t pad = (512 - len % 512) % 512;
	if (fwrite(hdr, 1, 512, t->f) != 512 || (len && fwrite(data, 1, len, t->f) != len) ||
	    (pad && fwrite(zeros, 1, pad, t->f) != pad))
		return -EIO;
	if (data_off)
		*data_off = t->pos + 512;
	t->pos += 512 + len + pad;
	return 0;
}

int tar_close(TarWriter *t)
{
	static const unsigned char zeros[1024];
	int rc = fwrite(zeros, 1, 1024, t->f) == 1024 ? 0 : -EIO;
	if (fclose(t->f) != 0 && !rc)
		rc = -errno;
	t->f = NULL;
	return rc;
}
