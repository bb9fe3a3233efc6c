// SPDX-License-Identifier: MIT
/*
 * image.c - opening an image: superblock (docs/format.md §3), long xattr
 * prefixes (§7.5), then the compressed-data state (lib/reader/zconfig.c);
 * closing it. The reads themselves are in lib/reader/io.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/internal.h"
#include "util/error.h"

#define KNOWN_COMPAT IMGFS_FEATURE_COMPAT_ALL
#define KNOWN_INCOMPAT IMGFS_FEATURE_INCOMPAT_ALL

/* sb_size limit of the kernel: the superblock must fit in a 4 KiB page. */
#define SB_SIZE_MAX (4096u - IMGFS_SUPER_OFFSET)

const struct imgfs_sb_info *imgfs_image_sb(const struct imgfs_image *img)
{
	return &img->sb;
}

/* Covered range of the superblock checksum (docs/format.md §3.3). */
static int sb_checksum(struct imgfs_image *img, uint32_t *crc,
		       struct imgfs_error *err)
{
	uint32_t len = super_csum_len(img->blksz);
	uint8_t *buf;
	int ret;

	if (!img_range_ok(img, IMGFS_SUPER_OFFSET, len))
		return error_set(
			err, -EINVAL,
			"image (%llu bytes) is shorter than the superblock checksum range (%u bytes at 1024)",
			(unsigned long long)img->size, len);
	buf = malloc(len);
	if (!buf)
		return error_set(err, -ENOMEM, "out of memory");
	ret = img_read(img, buf, len, IMGFS_SUPER_OFFSET, "superblock", 0, err);
	if (!ret)
		*crc = super_checksum(buf, len);
	free(buf);
	return ret;
}

static void sb_parse(struct imgfs_sb_info *sb, const uint8_t *b)
{
	struct imgfs_super_block d;

	super_block_decode(b, &d);
	sb->magic = d.magic;
	sb->checksum = d.checksum;
	sb->feature_compat = d.feature_compat;
	sb->blkszbits = d.blkszbits;
	sb->sb_extslots = d.sb_extslots;
	sb->sb_size = IMGFS_SUPER_BASE_SIZE +
		      IMGFS_SUPER_EXTSLOT_SIZE * sb->sb_extslots;
	sb->inos = d.inos;
	sb->epoch = (int64_t)d.epoch;
	sb->fixed_nsec = d.fixed_nsec;
	sb->blocks = d.blocks_lo;
	sb->meta_blkaddr = d.meta_blkaddr;
	sb->xattr_blkaddr = d.xattr_blkaddr;
	memcpy(sb->uuid, d.uuid, 16);
	memcpy(sb->label, d.volume_name, 16);
	sb->label[16] = '\0';
	sb->feature_incompat = d.feature_incompat;
	if (sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_COMPR_CFGS)
		sb->compr_algs = d.u1;
	else
		sb->lz4_max_distance = d.u1;
	sb->extra_devices = d.extra_devices;
	sb->devt_slotoff = d.devt_slotoff;
	sb->dirblkbits = d.dirblkbits;
	sb->xattr_prefix_count = d.xattr_prefix_count;
	sb->xattr_prefix_start = d.xattr_prefix_start;
	sb->packed_nid = d.packed_nid;
	sb->xattr_filter_reserved = d.xattr_filter_reserved;
	sb->build_time = d.build_time;
	sb->root_nid = d.root_nid;
	/* docs/format.md §10.2: root_nid then holds blocks bits 32..47 */
	if ((sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT) &&
	    d.root_nid_64) {
		sb->root_nid = d.root_nid_64;
		sb->blocks |= (uint64_t)d.root_nid << 32;
	}
	sb->unknown_compat = sb->feature_compat & ~KNOWN_COMPAT;
	sb->unknown_incompat = sb->feature_incompat & ~KNOWN_INCOMPAT;
}

static int sb_validate(struct imgfs_image *img, struct imgfs_error *err)
{
	struct imgfs_sb_info *sb = &img->sb;

	if (sb->magic != IMGFS_SUPER_MAGIC)
		return error_set(
			err, -EINVAL,
			"not an EROFS image: magic 0x%08x at offset 1024",
			sb->magic);
	if (sb->blkszbits < IMGFS_MIN_BLKSZBITS ||
	    sb->blkszbits > IMGFS_MAX_BLKSZBITS)
		return error_set(
			err, -EINVAL,
			"superblock: blkszbits %u not supported (9..12)",
			sb->blkszbits);
	if (sb->dirblkbits)
		return error_set(
			err, -EINVAL,
			"superblock: dirblkbits %u not supported (must be 0)",
			sb->dirblkbits);
	if (sb->sb_size > SB_SIZE_MAX)
		return error_set(
			err, -EINVAL,
			"superblock: invalid sb_extslots %u (size %u > %u)",
			sb->sb_extslots, sb->sb_size, SB_SIZE_MAX);
	if (sb->unknown_incompat && !(img->flags & IMGFS_OPEN_IGNORE_FEATURES))
		return error_set(
			err, -EOPNOTSUPP,
			"superblock: unknown incompatible features 0x%x",
			sb->unknown_incompat);
	if ((sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_METABOX) &&
	    sb->sb_size <= IMGFS_SUPER_BASE_SIZE)
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"superblock: METABOX set but sb_extslots is 0");
	return 0;
}

/*
 * The device table's slots (docs/format.md §10.1), for chunks on extra
 * devices mapped into the image at a unified address (tar-index images).
 * A table outside the image is left unread: such chunks stay unreadable,
 * and the checker reports the table's position.
 */
static int load_devices(struct imgfs_image *img, struct imgfs_error *err)
{
	const struct imgfs_sb_info *sb = &img->sb;
	bool is48 = sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_48BIT;
	uint64_t pos = (uint64_t)sb->devt_slotoff * IMGFS_DEVICE_SLOT_SIZE;
	uint8_t slot[IMGFS_DEVICE_SLOT_SIZE];
	struct imgfs_device_slot d;
	struct imgfs_error e = { 0 };

	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_DEVICE_TABLE) ||
	    !sb->extra_devices ||
	    !img_range_ok(img, pos,
			  (uint64_t)sb->extra_devices * IMGFS_DEVICE_SLOT_SIZE))
		return 0;
	img->dev_base = calloc(sb->extra_devices, sizeof(uint64_t));
	img->dev_blocks = calloc(sb->extra_devices, sizeof(uint64_t));
	if (!img->dev_base || !img->dev_blocks)
		return error_set(err, -ENOMEM, "out of memory");
	for (unsigned int i = 0; i < sb->extra_devices; i++) {
		if (img_read(img, slot, sizeof(slot),
			     pos + (uint64_t)i * sizeof(slot), "device slot", 0,
			     &e))
			return 0;
		device_slot_decode(slot, &d);
		img->dev_blocks[i] = device_slot_blocks(&d, is48);
		img->dev_base[i] = device_slot_uniaddr(&d, is48);
	}
	return 0;
}

/* Read one long-prefix record at byte offset *@pos; advance *@pos. */
static int load_one_prefix(struct imgfs_image *img, unsigned int n,
			   uint64_t *pos, struct imgfs_error *err)
{
	struct imgfs_long_prefix *p = &img->prefixes[n];
	uint8_t hdr[IMGFS_XATTR_LONG_PREFIX_HDR_SIZE];
	struct imgfs_xattr_long_prefix rec;
	unsigned int len;
	int ret;

	*pos = (*pos + 3) & ~(uint64_t)3;
	ret = img_read(img, hdr, sizeof(hdr), *pos, "long xattr prefix", 0,
		       err);
	if (ret)
		return ret;
	xattr_long_prefix_decode(hdr, &rec);
	len = rec.len;
	if (len < 1 || len > 256)
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"long xattr prefix %u at offset %llu: bad length %u", n,
			(unsigned long long)*pos, len);
	p->base_index = rec.base_index;
	p->infix_len = (uint8_t)(len - 1);
	ret = img_read(img, p->infix, p->infix_len,
		       *pos + IMGFS_XATTR_LONG_PREFIX_HDR_SIZE,
		       "long xattr prefix", 0, err);
	if (ret)
		return ret;
	p->infix[p->infix_len] = '\0';
	if (!imgfs_xattr_prefix(p->base_index) || p->base_index == 5 ||
	    memchr(p->infix, '\0', p->infix_len))
		return error_set(
			err, -IMGFS_EFSCORRUPTED,
			"long xattr prefix %u: bad base index %u or NUL in infix",
			n, p->base_index);
	*pos += 2 + len;
	return 0;
}

/*
 * The table lives in the packed inode or the metabox unless PLAIN_XATTR_PFX
 * says it is plain (docs/format.md §7.5); only the plain form is read here.
 */
static int load_prefixes(struct imgfs_image *img, struct imgfs_error *err)
{
	const struct imgfs_sb_info *sb = &img->sb;
	uint64_t pos = (uint64_t)sb->xattr_prefix_start << 2;
	bool plain;
	unsigned int i;
	int ret;

	if (!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_XATTR_PREFIXES) ||
	    !sb->xattr_prefix_count)
		return 0;
	plain = (sb->feature_compat & IMGFS_FEATURE_COMPAT_PLAIN_XATTR_PFX) ||
		(!(sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_METABOX) &&
		 !((sb->feature_incompat & IMGFS_FEATURE_INCOMPAT_FRAGMENTS) &&
		   sb->packed_nid));
	if (!plain)
		return 0; /* entries using them are reported as unknown */
	img->prefixes = calloc(sb->xattr_prefix_count, sizeof(*img->prefixes));
	if (!img->prefixes)
		return error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < sb->xattr_prefix_count; i++) {
		ret = load_one_prefix(img, i, &pos, err);
		if (ret)
			return ret;
		img->nr_prefixes = i + 1;
	}
	return 0;
}

static int image_setup(struct imgfs_image *img, struct imgfs_error *err)
{
	uint8_t raw[IMGFS_SUPER_BASE_SIZE];
	struct imgfs_sb_info *sb = &img->sb;
	int ret;

	if (!img_range_ok(img, IMGFS_SUPER_OFFSET, sizeof(raw)))
		return error_set(
			err, -EINVAL,
			"not an EROFS image: only %llu bytes, no superblock",
			(unsigned long long)img->size);
	ret = img_read(img, raw, sizeof(raw), IMGFS_SUPER_OFFSET, "superblock",
		       0, err);
	if (ret)
		return ret;
	sb_parse(sb, raw);
	sb->image_size = img->size;
	ret = sb_validate(img, err);
	if (ret)
		return ret;
	img->blkszbits = sb->blkszbits;
	img->blksz = sb->blksz = 1u << sb->blkszbits;
	img->meta_base = (uint64_t)sb->meta_blkaddr << img->blkszbits;
	img->xattr_base = (uint64_t)sb->xattr_blkaddr << img->blkszbits;

	sb->checksum_ok = true;
	if (sb->feature_compat & IMGFS_FEATURE_COMPAT_SB_CHKSUM) {
		ret = sb_checksum(img, &sb->checksum_calc, err);
		if (ret)
			return ret;
		sb->checksum_ok = sb->checksum_calc == sb->checksum;
		if (!sb->checksum_ok &&
		    !(img->flags & IMGFS_OPEN_IGNORE_CHECKSUM))
			return error_set(
				err, -EBADMSG,
				"superblock: bad checksum 0x%08x (expected 0x%08x)",
				sb->checksum, sb->checksum_calc);
	}
	if (img_cache_init(img))
		return error_set(err, -ENOMEM, "out of memory");
	ret = load_prefixes(img, err);
	if (!ret)
		ret = load_devices(img, err);
	if (ret)
		return ret;
	return z_image_init(img, err);
}

static int image_new(unsigned int flags, struct imgfs_image **out,
		     struct imgfs_error *err)
{
	struct imgfs_image *img = calloc(1, sizeof(*img));

	*out = NULL;
	if (!img)
		return error_set(err, -ENOMEM, "out of memory");
	img->fd = -1;
	img->flags = flags;
	*out = img;
	return 0;
}

static int image_finish_open(struct imgfs_image *img, struct imgfs_image **out,
			     struct imgfs_error *err)
{
	int ret = image_setup(img, err);

	if (ret) {
		imgfs_image_close(img);
		return ret;
	}
	*out = img;
	return 0;
}

static int fd_size(int fd, uint64_t *size, struct imgfs_error *err)
{
	struct stat st;
	off_t end;

	if (fstat(fd, &st))
		return error_set(err, -errno, "fstat: %s", strerror(errno));
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		return error_set(err, -EISDIR, "image is a directory");
	end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		return error_set(err, -errno, "cannot size the image: %s",
				 strerror(errno));
	*size = (uint64_t)end;
	return 0;
}

int imgfs_image_open_fd(int fd, unsigned int flags, struct imgfs_image **out,
			struct imgfs_error *err)
{
	struct imgfs_image *img = NULL;
	int ret;

	ret = image_new(flags, &img, err);
	if (ret)
		return ret;
	img->fd = fd;
	ret = fd_size(fd, &img->size, err);
	if (ret) {
		imgfs_image_close(img);
		return ret;
	}
	return image_finish_open(img, out, err);
}

int imgfs_image_open(const char *path, unsigned int flags,
		     struct imgfs_image **out, struct imgfs_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	*out = NULL;
	if (fd < 0)
		return error_set(err, -errno, "%s: %s", path, strerror(errno));
	ret = imgfs_image_open_fd(fd, flags, out, err);
	if (ret) {
		close(fd);
		return ret;
	}
	(*out)->own_fd = true;
	return 0;
}

int imgfs_image_open_mem(const void *buf, size_t size, unsigned int flags,
			 struct imgfs_image **out, struct imgfs_error *err)
{
	struct imgfs_image *img = NULL;
	int ret;

	ret = image_new(flags, &img, err);
	if (ret)
		return ret;
	/* A zero-length buffer still needs a non-NULL base for memcpy. */
	img->mem = size ? buf : (const uint8_t *)"";
	img->size = size;
	return image_finish_open(img, out, err);
}

void imgfs_image_close(struct imgfs_image *img)
{
	if (!img)
		return;
	z_image_free(img);
	img_cache_free(img);
	if (img->own_fd && img->fd >= 0)
		close(img->fd);
	free(img->prefixes);
	free(img->dev_base);
	free(img->dev_blocks);
	free(img);
}
