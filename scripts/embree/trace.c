/* The anchor of raylb's traversal benchmark: Embree 3 on the rays raylb traces, on one thread
 * (or, for a ray file, on N).
 *
 *   trace MESH.obj WIDTH HEIGHT PASSES       the camera rays of `raylb bench trace --mesh FILE`
 *   trace MESH.obj WIDTH HEIGHT PASSES --packet 8|16
 *                                            the same camera rays in packets: blocks of 4x2
 *                                            pixels through rtcIntersect8, or of 4x4 through
 *                                            rtcIntersect16 (a coherent context)
 *   trace MESH.obj --rays RAYS PASSES [--threads N]
 *                                            the rays of a RAYLBRAY file (`raylb bench trace
 *                                            --dump`), rtcIntersect1 or rtcOccluded1 as the
 *                                            file's query says; on N threads (default 1), blocks
 *                                            of 4096 rays dealt out in turn, as `raylb bench
 *                                            trace --threads N` deals its tasks
 *   trace MESH.obj --random COUNT SEED QUERY OUT.rays
 *                                            writes COUNT random surface-to-surface rays of the
 *                                            mesh: from area-weighted points of its triangles,
 *                                            cosine-weighted about the triangle's normal (to
 *                                            either side), t in (0, inf) for QUERY 0 (closest
 *                                            hit) and (0, 1e3 * mesh diagonal) for 1 (occlusion)
 *
 * prints `build S s, M Mtriangles/s` (rtcCommitScene, on the one thread the device is given),
 * `hits H of R rays` and `best S s, M Mrays/s`, as `raylb bench trace` does. A mesh
 * `raylb export -o FILE.obj` wrote holds the scene's triangles with the tracer's float bits. The camera is raylb's automatic one
 * for a bare mesh (Scene::from_mesh): looking along -z with +y up at the centre of the
 * bounding box of the mesh's triangles, a 45-degree vertical field of view, from
 * d = 1.1 * max(extent x, extent y) / (2 tan 22.5) + extent z / 2; rays through the pixel
 * centres, computed with the same operations in single precision (build without floating
 * contraction, so that no multiply-add is fused). The OBJ reader takes `v` and `f` lines
 * (polygons as fans around their first corner, as raylb's reader makes them) and skips the
 * rest. */

#include <embree3/rtcore.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    float *v;
    size_t nv, cap_v;
    unsigned *f;
    size_t nf, cap_f;
} Mesh;

static void push_vertex(Mesh *m, float x, float y, float z) {
    if (m->nv == m->cap_v) {
        m->cap_v = m->cap_v ? 2 * m->cap_v : 1024;
        m->v = realloc(m->v, m->cap_v * 3 * sizeof(float));
    }
    m->v[3 * m->nv] = x;
    m->v[3 * m->nv + 1] = y;
    m->v[3 * m->nv + 2] = z;
    m->nv++;
}

static void push_face(Mesh *m, unsigned a, unsigned b, unsigned c) {
    if (m->nf == m->cap_f) {
        m->cap_f = m->cap_f ? 2 * m->cap_f : 1024;
        m->f = realloc(m->f, m->cap_f * 3 * sizeof(unsigned));
    }
    m->f[3 * m->nf] = a;
    m->f[3 * m->nf + 1] = b;
    m->f[3 * m->nf + 2] = c;
    m->nf++;
}

static int read_obj(const char *path, Mesh *m) {
    FILE *file = fopen(path, "r");
    if (!file) {
        perror(path);
        return 0;
    }
    char line[4096];
    while (fgets(line, sizeof line, file)) {
        if (line[0] == 'v' && line[1] == ' ') {
            float x, y, z;
            if (sscanf(line + 2, "%f %f %f", &x, &y, &z) == 3) push_vertex(m, x, y, z);
        } else if (line[0] == 'f' && line[1] == ' ') {
            long corners[64];
            int n = 0;
            for (char *word = strtok(line + 2, " \t\r\n"); word && n < 64;
                 word = strtok(NULL, " \t\r\n")) {
                long index = strtol(word, NULL, 10);
                corners[n++] = index < 0 ? (long)m->nv + index : index - 1;
            }
            for (int k = 1; k + 1 < n; k++)
                push_face(m, (unsigned)corners[0], (unsigned)corners[k], (unsigned)corners[k + 1]);
        }
    }
    fclose(file);
    return 1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void normalize(float v[3]) {
    float length = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    v[0] = v[0] / length;
    v[1] = v[1] / length;
    v[2] = v[2] / length;
}

/* A RAYLBRAY file: query 0 (closest hit) or 1 (occlusion), and eight floats a ray. */
typedef struct {
    unsigned query;
    unsigned long count;
    float *rays;
} RayFile;

static int read_rays(const char *path, RayFile *r) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        return 0;
    }
    unsigned char header[24];
    if (fread(header, 1, 24, file) != 24 || memcmp(header, "RAYLBRAY", 8) != 0) {
        fprintf(stderr, "%s: not a ray file\n", path);
        return 0;
    }
    unsigned version;
    memcpy(&version, header + 8, 4); /* little-endian, as the machines we run on */
    memcpy(&r->query, header + 12, 4);
    memcpy(&r->count, header + 16, 8);
    if (version != 1 || r->query > 1) {
        fprintf(stderr, "%s: version %u, query %u: not one this harness reads\n", path, version,
                r->query);
        return 0;
    }
    r->rays = malloc(r->count * 32);
    if (!r->rays || fread(r->rays, 32, r->count, file) != r->count) {
        fprintf(stderr, "%s: fewer rays than its count\n", path);
        return 0;
    }
    fclose(file);
    return 1;
}

/* Rays a thread takes at a time: raylb's bench traces a ray file in tasks of as many. */
#define BLOCK 4096ul

/* Traces one ray of a file (8 floats: origin, direction, t_min, t_max) as `query` says;
   returns whether it hit. */
static int trace_ray(RTCScene scene, struct RTCIntersectContext *context, const float *q,
                     unsigned query) {
    struct RTCRayHit rh;
    rh.ray.org_x = q[0];
    rh.ray.org_y = q[1];
    rh.ray.org_z = q[2];
    rh.ray.dir_x = q[3];
    rh.ray.dir_y = q[4];
    rh.ray.dir_z = q[5];
    rh.ray.tnear = q[6];
    rh.ray.tfar = q[7];
    rh.ray.mask = 0xffffffffu;
    rh.ray.flags = 0;
    rh.ray.time = 0.0f;
    if (query == 1) {
        rtcOccluded1(scene, context, &rh.ray);
        return rh.ray.tfar < 0.0f; /* Embree marks an occluded ray with tfar = -inf */
    }
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene, context, &rh);
    return rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
}

/* Traces the rays of `r` in the blocks `first`, `first + step`, ...; returns the hits. */
static unsigned long trace_blocks(RTCScene scene, const RayFile *r, unsigned long first,
                                  unsigned long step) {
    struct RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    unsigned long hits = 0;
    for (unsigned long block = first; block * BLOCK < r->count; block += step) {
        unsigned long end = (block + 1) * BLOCK < r->count ? (block + 1) * BLOCK : r->count;
        for (unsigned long i = block * BLOCK; i < end; i++)
            hits += trace_ray(scene, &context, &r->rays[8 * i], r->query);
    }
    return hits;
}

/* One thread's share of a pass over a ray file. */
typedef struct {
    RTCScene scene;
    const RayFile *rays;
    unsigned long first, step, hits;
} Share;

static void *trace_share(void *arg) {
    Share *s = arg;
    s->hits = trace_blocks(s->scene, s->rays, s->first, s->step);
    return NULL;
}

/* Traces every ray of `r` once on `threads` threads (the calling one among them); returns
   the hits. */
static unsigned long trace_file(RTCScene scene, const RayFile *r, unsigned threads) {
    Share shares[64];
    pthread_t ids[64];
    for (unsigned t = 0; t < threads; t++)
        shares[t] = (Share){.scene = scene, .rays = r, .first = t, .step = threads};
    for (unsigned t = 1; t < threads; t++)
        if (pthread_create(&ids[t], NULL, trace_share, &shares[t]) != 0) {
            fprintf(stderr, "cannot start a thread\n");
            exit(2);
        }
    trace_share(&shares[0]);
    unsigned long hits = shares[0].hits;
    for (unsigned t = 1; t < threads; t++) {
        pthread_join(ids[t], NULL);
        hits += shares[t].hits;
    }
    return hits;
}

/* xorshift64*, for rays that are the same on every machine from the same seed. */
static unsigned long long rng_state;
static float uniform(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (float)((rng_state * 2685821657736338717ull) >> 40) / 16777216.0f;
}

/* Writes `count` random surface-to-surface rays of `mesh` to `path` (see the top). */
static int random_rays(const Mesh *m, unsigned long count, unsigned long long seed,
                       unsigned query, const char *path) {
    double *area = malloc(m->nf * sizeof(double));
    double total = 0;
    for (size_t f = 0; f < m->nf; f++) {
        const float *a = &m->v[3 * m->f[3 * f]], *b = &m->v[3 * m->f[3 * f + 1]],
                    *c = &m->v[3 * m->f[3 * f + 2]];
        double e1[3], e2[3];
        for (int k = 0; k < 3; k++) {
            e1[k] = b[k] - a[k];
            e2[k] = c[k] - a[k];
        }
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                       e1[0] * e2[1] - e1[1] * e2[0]};
        total += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        area[f] = total; /* the running sum, searched below */
    }
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < m->nv; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fminf(lo[k], m->v[3 * i + k]);
            hi[k] = fmaxf(hi[k], m->v[3 * i + k]);
        }
    float diagonal = sqrtf((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
    FILE *file = fopen(path, "wb");
    if (!file) {
        perror(path);
        return 0;
    }
    unsigned version = 1;
    fwrite("RAYLBRAY", 1, 8, file);
    fwrite(&version, 4, 1, file);
    fwrite(&query, 4, 1, file);
    fwrite(&count, 8, 1, file);
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (unsigned long i = 0; i < count; i++) {
        double pick = uniform() * total;
        size_t low = 0, high = m->nf - 1;
        while (low < high) {
            size_t mid = (low + high) / 2;
            if (area[mid] < pick) low = mid + 1; else high = mid;
        }
        const float *a = &m->v[3 * m->f[3 * low]], *b = &m->v[3 * m->f[3 * low + 1]],
                    *c = &m->v[3 * m->f[3 * low + 2]];
        float u = uniform(), v = uniform();
        if (u + v > 1.0f) {
            u = 1.0f - u;
            v = 1.0f - v;
        }
        float o[3], e1[3], e2[3];
        for (int k = 0; k < 3; k++) {
            e1[k] = b[k] - a[k];
            e2[k] = c[k] - a[k];
            o[k] = a[k] + u * e1[k] + v * e2[k];
        }
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                      e1[0] * e2[1] - e1[1] * e2[0]};
        normalize(n);
        if (uniform() < 0.5f) for (int k = 0; k < 3; k++) n[k] = -n[k];
        /* A frame about n, and a cosine-weighted direction in it. */
        float t[3] = {fabsf(n[0]) > 0.9f ? 0.0f : 1.0f, fabsf(n[0]) > 0.9f ? 1.0f : 0.0f, 0.0f};
        float s[3] = {n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0]};
        normalize(s);
        float w[3] = {n[1] * s[2] - n[2] * s[1], n[2] * s[0] - n[0] * s[2], n[0] * s[1] - n[1] * s[0]};
        float r1 = uniform(), r2 = uniform();
        float radius = sqrtf(r1), phi = 2.0f * (float)M_PI * r2, up = sqrtf(1.0f - r1);
        float ray[8];
        for (int k = 0; k < 3; k++) {
            /* Off the surface by a little of the mesh's size, so the ray does not hit its own
               triangle. */
            ray[k] = o[k] + n[k] * 1e-5f * diagonal;
            ray[3 + k] = s[k] * radius * cosf(phi) + w[k] * radius * sinf(phi) + n[k] * up;
        }
        ray[6] = 0.0f;
        ray[7] = query == 1 ? 1e3f * diagonal : INFINITY;
        fwrite(ray, 4, 8, file);
    }
    fclose(file);
    free(area);
    return 1;
}

/* The camera: its eye, the direction of its view and the scale of its image plane. */
typedef struct {
    float eye[3], forward[3], right[3], up[3];
    float tan_half, aspect;
    unsigned width, height;
} Camera;

/* The direction of the ray through the centre of pixel (x, y), raylb's operations in order. */
static void camera_dir(const Camera *c, unsigned x, unsigned y, float d[3]) {
    float sx = (2.0f * ((float)x + 0.5f) / (float)c->width - 1.0f) * c->tan_half * c->aspect;
    float sy = (1.0f - 2.0f * ((float)y + 0.5f) / (float)c->height) * c->tan_half;
    for (int a = 0; a < 3; a++) d[a] = c->forward[a] + c->right[a] * sx + c->up[a] * sy;
    normalize(d);
}

/* One pass of the camera's rays in packets of N = 4 x ROWS lanes (rtcIntersectN over
   RTCRayHitN), block by block, lanes outside the image invalid; returns the hits. */
#define PACKET_PASS(N, ROWS)                                                                  \
    static unsigned long packet_pass##N(RTCScene scene, const Camera *c) {                   \
        struct RTCIntersectContext context;                                                   \
        rtcInitIntersectContext(&context);                                                    \
        context.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;                                  \
        unsigned long hits = 0;                                                               \
        for (unsigned by = 0; by < c->height; by += ROWS) {                                  \
            for (unsigned bx = 0; bx < c->width; bx += 4) {                                  \
                struct RTCRayHit##N rh __attribute__((aligned(64)));                              \
                int valid[N] __attribute__((aligned(64)));                                    \
                for (int k = 0; k < N; k++) {                                                 \
                    unsigned x = bx + k % 4, y = by + k / 4;                                  \
                    valid[k] = x < c->width && y < c->height ? -1 : 0;                        \
                    float d[3] = {0.0f, 0.0f, -1.0f};                                         \
                    if (valid[k]) camera_dir(c, x, y, d);                                     \
                    rh.ray.org_x[k] = c->eye[0];                                              \
                    rh.ray.org_y[k] = c->eye[1];                                              \
                    rh.ray.org_z[k] = c->eye[2];                                              \
                    rh.ray.dir_x[k] = d[0];                                                   \
                    rh.ray.dir_y[k] = d[1];                                                   \
                    rh.ray.dir_z[k] = d[2];                                                   \
                    rh.ray.tnear[k] = 0.0f;                                                   \
                    rh.ray.tfar[k] = INFINITY;                                                \
                    rh.ray.mask[k] = 0xffffffffu;                                             \
                    rh.ray.flags[k] = 0;                                                      \
                    rh.ray.time[k] = 0.0f;                                                    \
                    rh.hit.geomID[k] = RTC_INVALID_GEOMETRY_ID;                               \
                    rh.hit.instID[0][k] = RTC_INVALID_GEOMETRY_ID;                            \
                }                                                                             \
                rtcIntersect##N(valid, scene, &context, &rh);                                 \
                for (int k = 0; k < N; k++)                                                   \
                    hits += valid[k] && rh.hit.geomID[k] != RTC_INVALID_GEOMETRY_ID;          \
            }                                                                                 \
        }                                                                                     \
        return hits;                                                                          \
    }
PACKET_PASS(8, 2)
PACKET_PASS(16, 4)

int main(int argc, char **argv) {
    int file_mode = (argc == 5 || (argc == 7 && strcmp(argv[5], "--threads") == 0)) &&
                    strcmp(argv[2], "--rays") == 0;
    unsigned threads = argc == 7 && file_mode ? (unsigned)atoi(argv[6]) : 1;
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "--threads: 1 to 64\n");
        return 2;
    }
    int random_mode = argc == 7 && strcmp(argv[2], "--random") == 0;
    int packet_mode = argc == 7 && strcmp(argv[5], "--packet") == 0;
    int lanes = packet_mode ? atoi(argv[6]) : 1;
    if ((argc != 5 && !random_mode && !packet_mode && !file_mode) ||
        (packet_mode && lanes != 8 && lanes != 16)) {
        fprintf(stderr,
                "usage: %s MESH.obj WIDTH HEIGHT PASSES [--packet 8|16]\n"
                "       %s MESH.obj --rays RAYS PASSES [--threads N]\n"
                "       %s MESH.obj --random COUNT SEED QUERY OUT.rays\n",
                argv[0], argv[0], argv[0]);
        return 2;
    }
    Mesh mesh = {0};
    if (!read_obj(argv[1], &mesh)) return 2;
    if (random_mode) {
        unsigned long count = strtoul(argv[3], NULL, 10);
        unsigned long long seed = strtoull(argv[4], NULL, 10);
        unsigned query = (unsigned)atoi(argv[5]);
        return random_rays(&mesh, count, seed, query > 0, argv[6]) ? 0 : 2;
    }
    unsigned width = file_mode ? 0 : (unsigned)atoi(argv[2]);
    unsigned height = file_mode ? 0 : (unsigned)atoi(argv[3]);
    int passes = atoi(argv[4]);

    /* The bounds of the triangles' corners, as raylb's scene box. */
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < 3 * mesh.nf; i++) {
        const float *p = &mesh.v[3 * mesh.f[i]];
        for (int a = 0; a < 3; a++) {
            lo[a] = fminf(lo[a], p[a]);
            hi[a] = fmaxf(hi[a], p[a]);
        }
    }
    float center[3], extent[3];
    for (int a = 0; a < 3; a++) {
        center[a] = (lo[a] + hi[a]) * 0.5f;
        extent[a] = hi[a] - lo[a];
    }
    float tan_half = tanf(22.5f * (float)M_PI / 180.0f);
    float distance = 1.1f * fmaxf(extent[0], extent[1]) / (2.0f * tan_half) + extent[2] / 2.0f;
    float eye[3] = {center[0], center[1], center[2] + distance};

    /* One thread: the build too, as raylb's one-thread figures are taken. */
    RTCDevice device = rtcNewDevice("threads=1");
    RTCScene scene = rtcNewScene(device);
    /* EMBREE_ROBUST=1: Embree's robust mode, watertight triangle tests and conservative box
       tests, the guarantees raylb's traversal gives. */
    const char *robust = getenv("EMBREE_ROBUST");
    if (robust && strcmp(robust, "1") == 0) rtcSetSceneFlags(scene, RTC_SCENE_FLAG_ROBUST);
    RTCGeometry geometry = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float *vertices = rtcSetNewGeometryBuffer(geometry, RTC_BUFFER_TYPE_VERTEX, 0,
                                              RTC_FORMAT_FLOAT3, 3 * sizeof(float), mesh.nv);
    memcpy(vertices, mesh.v, mesh.nv * 3 * sizeof(float));
    unsigned *indices = rtcSetNewGeometryBuffer(geometry, RTC_BUFFER_TYPE_INDEX, 0,
                                                RTC_FORMAT_UINT3, 3 * sizeof(unsigned), mesh.nf);
    memcpy(indices, mesh.f, mesh.nf * 3 * sizeof(unsigned));
    rtcCommitGeometry(geometry);
    rtcAttachGeometry(scene, geometry);
    rtcReleaseGeometry(geometry);
    double build_started = now();
    rtcCommitScene(scene);
    double build = now() - build_started;
    printf("build   %.4f s, %.2f Mtriangles/s\n", build, mesh.nf / build / 1e6);

    if (file_mode) {
        RayFile rays;
        if (!read_rays(argv[3], &rays)) return 2;
        int passes = atoi(argv[4]);
        double best = INFINITY;
        unsigned long hits = 0;
        for (int pass = 0; pass < passes; pass++) {
            double started = now();
            hits = trace_file(scene, &rays, threads);
            double elapsed = now() - started;
            if (elapsed < best) best = elapsed;
        }
        printf("hits    %lu of %lu rays\n", hits, rays.count);
        printf("time    best of %d passes: %.4f s, %.2f Mrays/s\n", passes, best,
               rays.count / best / 1e6);
        return 0;
    }

    float aspect = (float)width / (float)height;
    /* raylb's camera frame for the mesh view: forward -z, right +x, up +y. Read through
       volatile, so that the compiler multiplies and adds every component as raylb's camera
       does rather than dropping the terms of the frame's zeros and ones; the rays have the
       same bits either way. */
    static volatile const float frame[9] = {0, 0, -1, 1, 0, 0, 0, 1, 0};
    float forward[3], right[3], up[3];
    for (int a = 0; a < 3; a++) {
        forward[a] = frame[a];
        right[a] = frame[3 + a];
        up[a] = frame[6 + a];
    }
    double best = INFINITY;
    unsigned long hits = 0;
    if (packet_mode) {
        Camera c = {.tan_half = tan_half, .aspect = aspect, .width = width, .height = height};
        for (int a = 0; a < 3; a++) {
            c.eye[a] = eye[a];
            c.forward[a] = forward[a];
            c.right[a] = right[a];
            c.up[a] = up[a];
        }
        for (int pass = 0; pass < passes; pass++) {
            double started = now();
            hits = lanes == 8 ? packet_pass8(scene, &c) : packet_pass16(scene, &c);
            double elapsed = now() - started;
            if (elapsed < best) best = elapsed;
        }
        passes = passes > 0 ? passes : 0;
    }
    for (int pass = 0; pass < (packet_mode ? 0 : passes); pass++) {
        struct RTCIntersectContext context;
        rtcInitIntersectContext(&context);
        unsigned long pass_hits = 0;
        double started = now();
        for (unsigned y = 0; y < height; y++) {
            for (unsigned x = 0; x < width; x++) {
                float sx = (2.0f * ((float)x + 0.5f) / (float)width - 1.0f) * tan_half * aspect;
                float sy = (1.0f - 2.0f * ((float)y + 0.5f) / (float)height) * tan_half;
                float d[3];
                for (int a = 0; a < 3; a++) d[a] = forward[a] + right[a] * sx + up[a] * sy;
                normalize(d);
                const float ray[8] = {eye[0], eye[1], eye[2], d[0], d[1], d[2], 0.0f, INFINITY};
                pass_hits += trace_ray(scene, &context, ray, 0);
            }
        }
        double elapsed = now() - started;
        if (elapsed < best) best = elapsed;
        hits = pass_hits;
    }
    unsigned long rays = (unsigned long)width * height;
    printf("hits    %lu of %lu rays\n", hits, rays);
    printf("time    best of %d passes: %.4f s, %.2f Mrays/s\n", passes, best, rays / best / 1e6);
    rtcReleaseScene(scene);
    rtcReleaseDevice(device);
    return 0;
}
