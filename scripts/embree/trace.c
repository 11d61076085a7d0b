/* The anchor of raylb's traversal benchmark: Embree 3's rtcIntersect1 over the camera rays
 * that `raylb bench trace --mesh FILE` traces, on one thread.
 *
 *   trace MESH.obj WIDTH HEIGHT PASSES
 *
 * prints `hits H of R rays` and `best S s, M Mrays/s`. The camera is raylb's automatic one
 * for a bare mesh (Scene::from_mesh): looking along -z with +y up at the centre of the
 * bounding box of the mesh's triangles, a 45-degree vertical field of view, from
 * d = 1.1 * max(extent x, extent y) / (2 tan 22.5) + extent z / 2; rays through the pixel
 * centres, computed with the same operations in single precision (build without floating
 * contraction, so that no multiply-add is fused). The OBJ reader takes `v` and `f` lines
 * (polygons as fans around their first corner, as raylb's reader makes them) and skips the
 * rest. */

#include <embree3/rtcore.h>
#include <math.h>
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

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s MESH.obj WIDTH HEIGHT PASSES\n", argv[0]);
        return 2;
    }
    Mesh mesh = {0};
    if (!read_obj(argv[1], &mesh)) return 2;
    unsigned width = (unsigned)atoi(argv[2]), height = (unsigned)atoi(argv[3]);
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

    RTCDevice device = rtcNewDevice(NULL);
    RTCScene scene = rtcNewScene(device);
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
    rtcCommitScene(scene);

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
    for (int pass = 0; pass < passes; pass++) {
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
                struct RTCRayHit rh;
                rh.ray.org_x = eye[0];
                rh.ray.org_y = eye[1];
                rh.ray.org_z = eye[2];
                rh.ray.dir_x = d[0];
                rh.ray.dir_y = d[1];
                rh.ray.dir_z = d[2];
                rh.ray.tnear = 0.0f;
                rh.ray.tfar = INFINITY;
                rh.ray.mask = 0xffffffffu;
                rh.ray.flags = 0;
                rh.ray.time = 0.0f;
                rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
                rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
                rtcIntersect1(scene, &context, &rh);
                pass_hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
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
