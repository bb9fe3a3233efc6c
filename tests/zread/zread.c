// SPDX-License-Identifier: MIT
/*
 * zread - test driver for reading compressed images through libimgfs.
 *
 * Options: -b CHUNK reads in CHUNK-byte pieces (default 65536); -i opens
 * images whose superblock checksum is wrong (patched by a test).
 *
 *   zread extract [-b CHUNK] IMG DIR   write the tree into DIR (regular
 *                                      files, directories, symlinks) and
 *                                      print layout/extent statistics
 *   zread cat [-b CHUNK] IMG PATH      file content to standard output
 *   zread extents IMG PATH             one line per extent
 *   zread index IMG PATH               byte range of the compressed index
 *   zread threads IMG N                N threads read every file at once;
 *                                      their digests must match a
 *                                      single-threaded pass
 *   zread checkcount IMG               run the checker with data reads; it
 *                                      must decode each pcluster once
 *   zread fuzz IMG ITERATIONS SEED     mutate the image in memory and read
 *                                      everything: errors are fine, crashes
 *                                      and hangs are not
 *
 * extract also checks that reading each file sequentially decodes each of
 * its pclusters exactly once (the per-image cache at work).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imgfs/check.h"
#include "imgfs/reader.h"
#include "reader/zdata.h"
#include "util/error.h"

#define MAX_DEPTH 64
#define FUZZ_MAX_ENTRIES 4096
#define FUZZ_MAX_FILE_BYTES (16u << 20)

struct stats {
	uint64_t files, compressed_full, compressed_compact, flat;
	uint64_t ext_compressed, ext_raw, ext_inline, ext_fragment;
	uint64_t ext_big, ext_interlaced, ext_partial;
	uint64_t alg[IMGFS_COMPR_MAX];
	uint64_t decoded, expected;
};

/* A pcluster's identity as the cache sees it. */
struct pkey {
	uint64_t pos, plen, len;
	unsigned int alg;
	bool valid;
};

struct walker {
	struct imgfs_image *img;
	size_t chunk;
	bool fuzz; /* errors are expected: count them, go on */
	unsigned int entries;
	struct stats st;
	struct pkey last;
	uint64_t errors;
	/* per-file digests, in walk order (threads test) */
	uint64_t *digests;
	size_t ndigests, cap;
	int (*on_file)(struct walker *w, const char *path,
		       const struct imgfs_inode *inode);
	const char *outdir;
};

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int count_extent(void *arg, const struct imgfs_extent *ext)
{
	struct walker *w = arg;
	struct stats *st = &w->st;
	struct pkey k;

	if (ext->kind == IMGFS_EXTENT_FRAGMENT) {
		st->ext_fragment++;
		return 0;
	}
	if (ext->kind != IMGFS_EXTENT_COMPRESSED)
		return 0;
	if (ext->flags & IMGFS_EXTENT_F_INLINE)
		st->ext_inline++;
	if (ext->flags & IMGFS_EXTENT_F_INTERLACED)
		st->ext_interlaced++;
	if (ext->flags & IMGFS_EXTENT_F_PARTIAL)
		st->ext_partial++;
	if (ext->plen > imgfs_image_sb(w->img)->blksz)
		st->ext_big++;
	if (ext->flags & IMGFS_EXTENT_F_RAW) {
		st->ext_raw++;
		return 0;
	}
	st->ext_compressed++;
	if (ext->algorithm < IMGFS_COMPR_MAX)
		st->alg[ext->algorithm]++;
	k = (struct pkey){ ext->pos, ext->plen, ext->length, ext->algorithm,
			   true };
	if (!w->last.valid || memcmp(&k, &w->last, sizeof(k)))
		st->expected++;
	w->last = k;
	return 0;
}

/* Read the whole file in w->chunk pieces; hand each piece to @fd/@h. */
static int read_file(struct walker *w, const struct imgfs_inode *inode,
		     int fd, uint64_t *h, struct imgfs_error *err)
{
	uint64_t off = 0, limit = inode->size;
	uint8_t *buf = malloc(w->chunk);
	ssize_t n = 0;

	if (!buf)
		return -ENOMEM;
	if (w->fuzz && limit > FUZZ_MAX_FILE_BYTES)
		limit = FUZZ_MAX_FILE_BYTES;
	while (off < limit) {
		n = imgfs_read(w->img, inode, off, buf, w->chunk, err);
		if (n <= 0)
			break;
		if (h)
			*h = fnv1a(*h, buf, (size_t)n);
		if (fd >= 0 && write(fd, buf, (size_t)n) != n) {
			n = -errno;
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	if (off < limit && n >= 0)
		return error_set(err, -EIO, "nid %llu: short read at %llu",
				 (unsigned long long)inode->nid,
				 (unsigned long long)off);
	return n < 0 ? (int)n : 0;
}

static int extract_file(struct walker *w, const char *path,
			const struct imgfs_inode *inode)
{
	struct imgfs_error err = { 0 };
	char out[8192];
	uint64_t before;
	int fd, ret;

	snprintf(out, sizeof(out), "%s/%s", w->outdir, path);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(out);
		return -errno;
	}
	if (imgfs_inode_is_compressed(inode)) {
		if (inode->layout == IMGFS_LAYOUT_COMPRESSED_FULL)
			w->st.compressed_full++;
		else
			w->st.compressed_compact++;
		ret = imgfs_extent_iterate(w->img, inode, count_extent, w,
					   &err);
		if (ret) {
			fprintf(stderr, "%s: extents: %s\n", path, err.msg);
			close(fd);
			return ret;
		}
	} else {
		w->st.flat++;
	}
	before = z_decoded_count(w->img);
	ret = read_file(w, inode, fd, NULL, &err);
	w->st.decoded += z_decoded_count(w->img) - before;
	close(fd);
	if (ret)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	return ret;
}

static int digest_file(struct walker *w, const char *path,
		       const struct imgfs_inode *inode)
{
	struct imgfs_error err = { 0 };
	uint64_t h = 0xcbf29ce484222325ull;
	int ret = read_file(w, inode, -1, &h, &err);

	if (ret) {
		if (!w->fuzz)
			fprintf(stderr, "%s: %s\n", path, err.msg);
		w->errors++;
		h = (uint64_t)ret;
	}
	if (w->ndigests == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		uint64_t *d = realloc(w->digests, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		w->digests = d;
		w->cap = cap;
	}
	w->digests[w->ndigests++] = h;
	return w->fuzz ? 0 : ret;
}

struct names {
	char **v;
	uint64_t *nid;
	size_t n, cap;
};

static int collect(void *arg, const struct imgfs_dirent_info *de)
{
	struct names *nm = arg;

	if (!strcmp(de->name, ".") || !strcmp(de->name, ".."))
		return 0;
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? nm->cap * 2 : 32;
		char **v = realloc(nm->v, cap * sizeof(*v));
		uint64_t *nid;

		if (!v)
			return -ENOMEM;
		nm->v = v;
		nid = realloc(nm->nid, cap * sizeof(*nid));
		if (!nid)
			return -ENOMEM;
		nm->nid = nid;
		nm->cap = cap;
	}
	nm->v[nm->n] = strdup(de->name);
	if (!nm->v[nm->n])
		return -ENOMEM;
	nm->nid[nm->n++] = de->nid;
	return 0;
}

static void names_free(struct names *nm)
{
	size_t i;

	for (i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
	free(nm->nid);
}

static int walk_dir(struct walker *w, const char *path,
		    const struct imgfs_inode *dir, int depth);

static int walk_entry(struct walker *w, const char *path, uint64_t nid,
		      int depth)
{
	struct imgfs_error err = { 0 };
	struct imgfs_inode inode;
	char target[IMGFS_SYMLINK_MAX + 1], out[8192];
	int ret;

	if (w->fuzz && ++w->entries > FUZZ_MAX_ENTRIES)
		return 1;
	ret = imgfs_inode_read(w->img, nid, &inode, &err);
	if (ret) {
		if (!w->fuzz)
			fprintf(stderr, "%s: %s\n", path, err.msg);
		w->errors++;
		return w->fuzz ? 0 : ret;
	}
	if (imgfs_inode_is_dir(&inode)) {
		if (w->outdir) {
			snprintf(out, sizeof(out), "%s/%s", w->outdir, path);
			if (mkdir(out, 0755) && errno != EEXIST)
				return -errno;
		}
		return walk_dir(w, path, &inode, depth + 1);
	}
	if (imgfs_inode_is_symlink(&inode)) {
		ret = (int)imgfs_readlink(w->img, &inode, target,
					  sizeof(target), &err);
		if (ret < 0) {
			w->errors++;
			if (!w->fuzz)
				fprintf(stderr, "%s: %s\n", path, err.msg);
			return w->fuzz ? 0 : ret;
		}
		if (w->outdir) {
			snprintf(out, sizeof(out), "%s/%s", w->outdir, path);
			if (symlink(target, out))
				return -errno;
		}
		return 0;
	}
	if (!imgfs_inode_is_reg(&inode))
		return 0;
	w->st.files++;
	return w->on_file(w, path, &inode);
}

static int walk_dir(struct walker *w, const char *path,
		    const struct imgfs_inode *dir, int depth)
{
	struct imgfs_error err = { 0 };
	struct names nm = { 0 };
	char sub[4096];
	size_t i;
	int ret;

	if (depth > MAX_DEPTH)
		return w->fuzz ? 0 : -ELOOP;
	ret = imgfs_dir_iterate(w->img, dir, collect, &nm, &err);
	if (ret < 0) {
		w->errors++;
		if (!w->fuzz)
			fprintf(stderr, "%s: %s\n", path, err.msg);
		if (!w->fuzz || ret == -ENOMEM) {
			names_free(&nm);
			return ret;
		}
	}
	for (i = 0, ret = 0; i < nm.n && !ret; i++) {
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "/" : "",
			 nm.v[i]);
		ret = walk_entry(w, sub, nm.nid[i], depth);
	}
	names_free(&nm);
	return ret;
}

static int walk(struct walker *w)
{
	struct imgfs_error err = { 0 };
	struct imgfs_inode root;
	int ret;

	ret = imgfs_inode_read_root(w->img, &root, &err);
	if (ret) {
		if (!w->fuzz)
			fprintf(stderr, "root: %s\n", err.msg);
		return ret;
	}
	ret = walk_dir(w, "", &root, 0);
	return ret > 0 ? 0 : ret;
}

/* -i: open even with a bad superblock checksum (patched images) */
static unsigned int open_flags;

static int open_image(const char *path, struct imgfs_image **img)
{
	struct imgfs_error err = { 0 };
	int ret = imgfs_image_open(path, open_flags, img, &err);

	if (ret)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	return ret;
}

static void print_stats(const struct stats *st)
{
	unsigned int a;

	printf("files %" PRIu64 "\n", st->files);
	printf("flat %" PRIu64 "\n", st->flat);
	printf("compressed_full %" PRIu64 "\n", st->compressed_full);
	printf("compressed_compact %" PRIu64 "\n", st->compressed_compact);
	printf("ext_compressed %" PRIu64 "\n", st->ext_compressed);
	printf("ext_raw %" PRIu64 "\n", st->ext_raw);
	printf("ext_inline %" PRIu64 "\n", st->ext_inline);
	printf("ext_fragment %" PRIu64 "\n", st->ext_fragment);
	printf("ext_big %" PRIu64 "\n", st->ext_big);
	printf("ext_interlaced %" PRIu64 "\n", st->ext_interlaced);
	printf("ext_partial %" PRIu64 "\n", st->ext_partial);
	for (a = 0; a < IMGFS_COMPR_MAX; a++)
		printf("alg_%s %" PRIu64 "\n", zalg_name(a), st->alg[a]);
	printf("decoded %" PRIu64 "\n", st->decoded);
	printf("expected_decodes %" PRIu64 "\n", st->expected);
}

static int cmd_extract(const char *img_path, const char *dir, size_t chunk)
{
	struct walker w = { .chunk = chunk, .on_file = extract_file,
			    .outdir = dir };
	int ret;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	if (open_image(img_path, &w.img))
		return 1;
	ret = walk(&w);
	if (ret)
		fprintf(stderr, "extract failed: %s\n", strerror(-ret));
	if (!ret) {
		print_stats(&w.st);
		/* Fragments decode pclusters of the packed inode as well. */
		if (!w.st.ext_fragment && w.st.decoded != w.st.expected) {
			fprintf(stderr, "decoded %" PRIu64 " pclusters, expected %" PRIu64 "\n",
				w.st.decoded, w.st.expected);
			ret = -EPROTO;
		}
	}
	imgfs_image_close(w.img);
	return ret ? 1 : 0;
}

static int lookup(struct imgfs_image *img, const char *path,
		  struct imgfs_inode *inode)
{
	struct imgfs_error err = { 0 };
	uint64_t nid;
	int ret;

	ret = imgfs_lookup(img, path, &nid, &err);
	if (!ret)
		ret = imgfs_inode_read(img, nid, inode, &err);
	if (ret)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	return ret;
}

static int cmd_cat(const char *img_path, const char *path, size_t chunk)
{
	struct walker w = { .chunk = chunk };
	struct imgfs_error err = { 0 };
	struct imgfs_inode inode;
	int ret;

	if (open_image(img_path, &w.img))
		return 1;
	ret = lookup(w.img, path, &inode);
	if (!ret) {
		ret = read_file(&w, &inode, STDOUT_FILENO, NULL, &err);
		if (ret)
			fprintf(stderr, "%s: %s\n", path, err.msg);
	}
	imgfs_image_close(w.img);
	return ret ? 1 : 0;
}

static int print_extent(void *arg, const struct imgfs_extent *e)
{
	static const char *const kinds[] = { "hole", "plain", "inline",
					     "compressed", "fragment" };

	(void)arg;
	printf("%" PRIu64 " %" PRIu64 " %s %" PRIu64 " %" PRIu64
	       " %s%s%s%s%s\n",
	       e->logical, e->length, e->kind <= 4 ? kinds[e->kind] : "?",
	       e->pos, e->plen,
	       (e->flags & IMGFS_EXTENT_F_RAW) ? "raw"
					       : zalg_name(e->algorithm),
	       (e->flags & IMGFS_EXTENT_F_INLINE) ? ",inline" : "",
	       (e->flags & IMGFS_EXTENT_F_INTERLACED) ? ",interlaced" : "",
	       (e->flags & IMGFS_EXTENT_F_PARTIAL) ? ",partial" : "",
	       (e->flags & IMGFS_EXTENT_F_SHARED) ? ",shared" : "");
	return 0;
}

static int cmd_extents(const char *img_path, const char *path, bool index)
{
	struct imgfs_error err = { 0 };
	struct imgfs_image *img;
	struct imgfs_inode inode;
	uint64_t start, end;
	int ret;

	if (open_image(img_path, &img))
		return 1;
	ret = lookup(img, path, &inode);
	if (!ret && index) {
		ret = z_index_range(img, &inode, &start, &end, &err);
		if (!ret)
			printf("%" PRIu64 " %" PRIu64 "\n", start, end);
	} else if (!ret) {
		ret = imgfs_extent_iterate(img, &inode, print_extent, NULL,
					   &err);
	}
	if (ret && err.code)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	imgfs_image_close(img);
	return ret ? 1 : 0;
}

struct thread_arg {
	struct imgfs_image *img;
	size_t chunk;
	uint64_t *digests;
	size_t n;
	int ret;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	struct walker w = { .img = a->img, .chunk = a->chunk,
			    .on_file = digest_file };

	a->ret = walk(&w);
	a->digests = w.digests;
	a->n = w.ndigests;
	return NULL;
}

static int cmd_threads(const char *img_path, int n)
{
	struct walker ref = { .chunk = 65536, .on_file = digest_file };
	struct thread_arg *ta = calloc((size_t)n, sizeof(*ta));
	pthread_t *tid = calloc((size_t)n, sizeof(*tid));
	int i, bad = 0;

	if (!ta || !tid || open_image(img_path, &ref.img))
		return 1;
	if (walk(&ref)) {
		imgfs_image_close(ref.img);
		return 1;
	}
	for (i = 0; i < n; i++) {
		ta[i].img = ref.img;
		/* different piece sizes so the threads interleave pclusters */
		ta[i].chunk = 1000 + 3000 * (size_t)i;
		pthread_create(&tid[i], NULL, thread_main, &ta[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		if (ta[i].ret || ta[i].n != ref.ndigests ||
		    memcmp(ta[i].digests, ref.digests,
			   ref.ndigests * sizeof(uint64_t))) {
			fprintf(stderr, "thread %d: different content\n", i);
			bad = 1;
		}
		free(ta[i].digests);
	}
	printf("files %zu threads %d\n", ref.ndigests, n);
	free(ref.digests);
	free(ta);
	free(tid);
	imgfs_image_close(ref.img);
	return bad;
}

static int count_only(struct walker *w, const char *path,
		      const struct imgfs_inode *inode)
{
	struct imgfs_error err = { 0 };
	int ret = 0;

	(void)path;
	if (imgfs_inode_is_compressed(inode))
		ret = imgfs_extent_iterate(w->img, inode, count_extent, w,
					   &err);
	if (ret)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	return ret;
}

/* The checker reads every file; each pcluster must be decoded once. */
static int cmd_checkcount(const char *img_path)
{
	struct walker w = { .chunk = 65536, .on_file = count_only };
	struct imgfs_check_result res;
	struct imgfs_error err = { 0 };
	uint64_t decoded;
	int ret;

	if (open_image(img_path, &w.img))
		return 1;
	ret = walk(&w);
	if (!ret) {
		decoded = z_decoded_count(w.img);
		ret = imgfs_check_image(w.img, NULL, &res, &err);
		decoded = z_decoded_count(w.img) - decoded;
		printf("pclusters %" PRIu64 " decoded %" PRIu64 " errors %" PRIu64 "\n",
		       w.st.expected, decoded, res.errors);
		if (!ret && (decoded != w.st.expected || res.errors))
			ret = -EPROTO;
	}
	imgfs_image_close(w.img);
	return ret ? 1 : 0;
}

static int load(const char *path, uint8_t **buf, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		return -1;
	}
	*size = (size_t)st.st_size;
	*buf = malloc(*size ? *size : 1);
	n = *buf ? read(fd, *buf, *size) : -1;
	close(fd);
	return n == (ssize_t)*size ? 0 : -1;
}

/* xorshift64: deterministic mutations for a given seed */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void mutate(uint8_t *b, size_t size, uint64_t *s)
{
	unsigned int i, n = 1 + rnd(s) % 8;

	for (i = 0; i < n; i++) {
		size_t at = rnd(s) % size;

		switch (rnd(s) % 4) {
		case 0:
			b[at] ^= (uint8_t)(1u << (rnd(s) % 8));
			break;
		case 1:
			b[at] = (uint8_t)rnd(s);
			break;
		case 2:
			b[at] = 0;
			break;
		default:
			b[at] = 0xff;
			break;
		}
	}
}

static int cmd_fuzz(const char *img_path, unsigned long iters, uint64_t seed)
{
	uint8_t *orig, *b;
	size_t size;
	unsigned long i, opened = 0, clean = 0;

	if (load(img_path, &orig, &size) || size < 2048)
		return 1;
	b = malloc(size);
	if (!b)
		return 1;
	seed = seed ? seed : 1;
	for (i = 0; i < iters; i++) {
		struct walker w = { .chunk = 1 + rnd(&seed) % 70000,
				    .fuzz = true, .on_file = digest_file };
		struct imgfs_error err = { 0 };

		memcpy(b, orig, size);
		mutate(b, size, &seed);
		if (imgfs_image_open_mem(b, size, IMGFS_OPEN_IGNORE_CHECKSUM,
					 &w.img, &err))
			continue;
		opened++;
		if (!walk(&w) && !w.errors)
			clean++;
		free(w.digests);
		imgfs_image_close(w.img);
	}
	printf("iterations %lu opened %lu clean %lu\n", iters, opened, clean);
	free(b);
	free(orig);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: zread CMD [-i] [-b CHUNK] ARGS: extract IMG DIR | cat IMG PATH |\n"
		"       extents IMG PATH | index IMG PATH | threads IMG N |\n"
		"       checkcount IMG |\n"
		"       fuzz IMG ITERATIONS SEED\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t chunk = 65536;
	const char *cmd;
	int opt;

	if (argc < 2)
		usage();
	cmd = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "b:i")) != -1) {
		if (opt == 'i') {
			open_flags |= IMGFS_OPEN_IGNORE_CHECKSUM;
			continue;
		}
		if (opt != 'b')
			usage();
		chunk = strtoul(optarg, NULL, 0);
		if (!chunk)
			usage();
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "checkcount") && argc == 1)
		return cmd_checkcount(argv[0]);
	if (!strcmp(cmd, "fuzz") && argc == 3)
		return cmd_fuzz(argv[0], strtoul(argv[1], NULL, 0),
				strtoull(argv[2], NULL, 0));
	if (argc != 2)
		usage();
	if (!strcmp(cmd, "extract"))
		return cmd_extract(argv[0], argv[1], chunk);
	if (!strcmp(cmd, "cat"))
		return cmd_cat(argv[0], argv[1], chunk);
	if (!strcmp(cmd, "extents"))
		return cmd_extents(argv[0], argv[1], false);
	if (!strcmp(cmd, "index"))
		return cmd_extents(argv[0], argv[1], true);
	if (!strcmp(cmd, "threads"))
		return cmd_threads(argv[0], atoi(argv[1]));
	usage();
	return 2;
}
