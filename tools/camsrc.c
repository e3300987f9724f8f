// Camera-like source. The world is built once: fractal value noise (octaves halving in amplitude
// as they double in frequency, the 1/f falloff of natural images) under a few dozen hard-edged
// textured rectangles and discs ("objects") and a slow lighting gradient; chroma is smooth with
// per-object tints. A frame samples the world through the camera at time t: a wandering pan
// (sums of slow sinusoids), hand shake (faster, smaller ones), zoom and roll; then moving discs
// are drawn, exposure drifts, and per-pixel sensor noise (a hash of x, y, n) is added. The
// content is what inter prediction meets in real footage: global motion plus local motion,
// occlusions, detail at every scale and noise that never repeats. A style makes it harder: faster
// motion, stronger shake and noise, and a near layer that moves faster than the world (parallax).
#include "camsrc.h" // defines: cam_new, cam_new_style, cam_free, cam_render

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CAM_OBJECTS 160
#define CAM_MOVERS 4
#define CAM_NEAR 48       // objects of the near layer (CamStyle.parallax), about a third of the view
#define CAM_NEAR_RATE 2.5 // how much faster the near layer slides than the world

typedef struct {
	double x, y, w, h; // world pixels
	int disc;
	int luma, tint_u, tint_v, grain;
	int pattern;   // 0 natural grain, 1 stripes, 2 small blocks (print, tiles, fabric)
	double fx, fy; // stripe frequency (radians per pixel along x and y)
	uint32_t salt;
} CamObject;

struct CamSource {
	int w, h, fps;
	uint32_t seed;
	int ww, wh;       // world size
	uint8_t *wy;      // (wh, ww) luma
	uint8_t *wu, *wv; // (wh/2, ww/2) chroma
	double ph[16];    // motion phases
	CamObject movers[CAM_MOVERS];
	CamStyle style;
	CamObject near[CAM_NEAR]; // in near-layer coordinates (style.parallax)
};

static uint32_t hash3(uint32_t x, uint32_t y, uint32_t z)
{
	uint32_t h = x * 0x8da6b343u ^ y * 0xd8163841u ^ z * 0xcb1ab31fu;
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	h *= 0x297a2d39u;
	return h ^ (h >> 15);
}

static double unit(uint32_t h)
{
	return (h & 0xffffff) / 16777216.0;
}

// smooth value noise at (x, y) on a lattice of `cell` pixels
static double value_noise(double x, double y, double cell, uint32_t salt)
{
	double fx = x / cell, fy = y / cell;
	int ix = (int)floor(fx), iy = (int)floor(fy);
	double tx = fx - ix, ty = fy - iy;
	tx = tx * tx * (3 - 2 * tx), ty = ty * ty * (3 - 2 * ty);
	double a = unit(hash3((uint32_t)ix, (uint32_t)iy, salt)), b = unit(hash3((uint32_t)ix + 1, (uint32_t)iy, salt));
	double c = unit(hash3((uint32_t)ix, (uint32_t)iy + 1, salt)),
	       d = unit(hash3((uint32_t)ix + 1, (uint32_t)iy + 1, salt));
	return (a + (b - a) * tx) + ((c + (d - c) * tx) - (a + (b - a) * tx)) * ty;
}

static double fractal(double x, double y, uint32_t salt)
{
	double v = 0, amp = 1, cell = 128, norm = 0;
	for (int o = 0; o < 7; o++, amp *= 0.8, cell *= 0.5) {
		v += amp * (value_noise(x, y, cell, salt + (uint32_t)o) - 0.5);
		norm += amp;
	}
	return v / norm; // about -0.5 .. 0.5
}

static void make_object(CamObject *o, uint32_t seed, int i, int ww, int wh)
{
	uint32_t h = hash3(seed, (uint32_t)i, 77);
	double big = unit(hash3(seed, (uint32_t)i, 76)) < 0.2 ? 140 : 50; // a few large, many small
	o->w = 8 + big * unit(h), o->h = 8 + big * unit(h >> 3 ^ 0x9e37);
	o->x = unit(hash3(seed, (uint32_t)i, 78)) * (ww - o->w),
	o->y = unit(hash3(seed, (uint32_t)i, 79)) * (wh - o->h);
	o->disc = (h >> 7) & 1;
	o->luma = 40 + (int)(170 * unit(hash3(seed, (uint32_t)i, 80)));
	o->tint_u = (int)(60 * unit(hash3(seed, (uint32_t)i, 81))) - 30;
	o->tint_v = (int)(60 * unit(hash3(seed, (uint32_t)i, 82))) - 30;
	o->grain = 4 + (int)(20 * unit(hash3(seed, (uint32_t)i, 83)));
	o->pattern = (int)(3 * unit(hash3(seed, (uint32_t)i, 84)));
	double f = 0.25 + 0.9 * unit(hash3(seed, (uint32_t)i, 85)), a = 3.1416 * unit(hash3(seed, (uint32_t)i, 86));
	o->fx = f * cos(a), o->fy = f * sin(a);
	o->salt = hash3(seed, (uint32_t)i, 87);
}

// the object's own texture at (x, y), around 0
static double texture(const CamObject *o, double x, double y)
{
	if (o->pattern == 1)
		return o->grain * 2.0 * sin(o->fx * x + o->fy * y);
	if (o->pattern == 2)
		return o->grain * 3.0 * (unit(hash3((uint32_t)(x / 3), (uint32_t)(y / 3), o->salt)) - 0.5);
	return o->grain * 8.0 * fractal(x * 3.0, y * 3.0, o->salt);
}

static int inside(const CamObject *o, double x, double y)
{
	if (x < o->x || y < o->y || x >= o->x + o->w || y >= o->y + o->h)
		return 0;
	if (!o->disc)
		return 1;
	double dx = (x - o->x) / o->w - 0.5, dy = (y - o->y) / o->h - 0.5;
	return dx * dx + dy * dy < 0.25;
}

static uint8_t clamp_u8(double v, double lo, double hi)
{
	return (uint8_t)fmax(lo, fmin(hi, v));
}

static void build_world(CamSource *s)
{
	int cw = s->ww / 2, ch = s->wh / 2;
	for (int y = 0; y < s->wh; y++)
		for (int x = 0; x < s->ww; x++)
			s->wy[(size_t)y * s->ww + x] =
				clamp_u8(120 + 170 * fractal(x, y, s->seed) + 25 * sin(x * 0.002 + y * 0.003), 16, 235);
	for (int y = 0; y < ch; y++)
		for (int x = 0; x < cw; x++) {
			s->wu[(size_t)y * cw + x] =
				clamp_u8(128 + 40 * fractal(x * 0.5, y * 0.5, s->seed + 50), 16, 240);
			s->wv[(size_t)y * cw + x] =
				clamp_u8(128 + 40 * fractal(x * 0.5, y * 0.5, s->seed + 60), 16, 240);
		}
	for (int i = 0; i < CAM_OBJECTS; i++) { // painted over the background, later ones in front
		CamObject o;
		make_object(&o, s->seed, i, s->ww, s->wh);
		for (int y = (int)o.y; y < (int)(o.y + o.h) && y < s->wh; y++)
			for (int x = (int)o.x; x < (int)(o.x + o.w) && x < s->ww; x++) {
				if (!inside(&o, x, y))
					continue;
				double v = o.luma + texture(&o, x - o.x, y - o.y);
				s->wy[(size_t)y * s->ww + x] = clamp_u8(v, 16, 235);
				if (!(x & 1) && !(y & 1)) {
					s->wu[(size_t)(y / 2) * cw + x / 2] = clamp_u8(128 + o.tint_u * 1.5, 16, 240);
					s->wv[(size_t)(y / 2) * cw + x / 2] = clamp_u8(128 + o.tint_v * 1.5, 16, 240);
				}
			}
	}
}

int cam_new(CamSource **out, int width, int height, int fps, uint32_t seed)
{
	return cam_new_style(out, width, height, fps, seed, NULL);
}

int cam_new_style(CamSource **out, int width, int height, int fps, uint32_t seed, const CamStyle *style)
{
	CamSource *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->w = width, s->h = height, s->fps = fps, s->seed = seed;
	s->style = style ? *style : (CamStyle){1, 1, 1, 0};
	s->ww = 4 * width, s->wh = 3 * height;
	s->wy = malloc((size_t)s->ww * s->wh);
	s->wu = malloc((size_t)s->ww * s->wh / 4);
	s->wv = malloc((size_t)s->ww * s->wh / 4);
	if (!s->wy || !s->wu || !s->wv) {
		cam_free(s);
		return -ENOMEM;
	}
	for (int i = 0; i < 16; i++)
		s->ph[i] = 6.2832 * unit(hash3(seed, (uint32_t)i, 5));
	for (int i = 0; i < CAM_MOVERS; i++)
		make_object(&s->movers[i], seed ^ 0x5bd1e995u, i, width, height);
	// the near layer: large objects over the area the camera's centre sweeps at CAM_NEAR_RATE
	double rx = (s->ww - 1.4 * width) / 2, ry = (s->wh - 1.4 * height) / 2;
	double x0 = CAM_NEAR_RATE * (s->ww / 2.0 - rx), y0 = CAM_NEAR_RATE * (s->wh / 2.0 - ry);
	for (int i = 0; s->style.parallax && i < CAM_NEAR; i++) {
		CamObject *o = &s->near[i];
		make_object(o, seed ^ 0x27d4eb2fu, i, (int)(2 * CAM_NEAR_RATE * rx + width),
			    (int)(2 * CAM_NEAR_RATE * ry + height));
		o->w = 2 * o->w + 0.2 * width, o->h = 2 * o->h + 0.3 * height;
		o->x += x0 - o->w / 2, o->y += y0 - o->h / 2;
	}
	build_world(s);
	*out = s;
	return 0;
}

void cam_free(CamSource *s)
{
	if (!s)
		return;
	free(s->wy), free(s->wu), free(s->wv);
	free(s);
}

static double bilinear(const uint8_t *p, int w, int h, double x, double y)
{
	x = fmax(0, fmin(w - 1.001, x)), y = fmax(0, fmin(h - 1.001, y));
	int ix = (int)x, iy = (int)y;
	double tx = x - ix, ty = y - iy;
	const uint8_t *r = p + (size_t)iy * w + ix;
	return (r[0] * (1 - tx) + r[1] * tx) * (1 - ty) + (r[w] * (1 - tx) + r[w + 1] * tx) * ty;
}

typedef struct {
	double cx, cy, scale, cs, sn, gain;
} Camera;

// the camera at time t (seconds): wandering pan, shake, zoom, roll, exposure
static Camera camera(const CamSource *s, double t_sec)
{
	const double *p = s->ph;
	const double t = t_sec * s->style.motion, ts = t_sec, sk = s->style.shake;
	double rx = (s->ww - 1.4 * s->w) / 2, ry = (s->wh - 1.4 * s->h) / 2;
	Camera c;
	c.cx = s->ww / 2.0 + rx * (0.6 * sin(0.11 * t + p[0]) + 0.3 * sin(0.37 * t + p[1]) + 0.1 * sin(0.9 * t + p[2]));
	c.cy = s->wh / 2.0 + ry * (0.6 * sin(0.07 * t + p[3]) + 0.4 * sin(0.29 * t + p[4]));
	c.cx += sk * (1.5 * sin(7.1 * ts + p[5]) + 0.8 * sin(13.3 * ts + p[6])); // hand shake, pixels
	c.cy += sk * (1.2 * sin(6.3 * ts + p[7]) + 0.7 * sin(11.9 * ts + p[8]));
	c.scale = 1.0 + 0.12 * sin(0.17 * t + p[9]);
	double roll = 0.02 * sin(0.23 * t + p[10]) + 0.002 * sin(9.0 * ts + p[11]);
	c.cs = cos(roll) * c.scale, c.sn = sin(roll) * c.scale;
	c.gain = 1.0 + 0.05 * sin(0.3 * ts + p[12]);
	return c;
}

// the front-most near-layer object at screen (x, y), or NULL: the layer slides by CAM_NEAR_RATE x
// the camera's centre (no zoom or roll: it is close, and only its pan matters for the coder)
static const CamObject *near_at(const CamSource *s, const Camera *c, int x, int y)
{
	if (!s->style.parallax)
		return NULL;
	double u = CAM_NEAR_RATE * c->cx + x, v = CAM_NEAR_RATE * c->cy + y;
	for (int i = CAM_NEAR - 1; i >= 0; i--)
		if (inside(&s->near[i], u, v))
			return &s->near[i];
	return NULL;
}

void cam_render(const CamSource *s, int n, AVFrame *f)
{
	double t = (double)n / s->fps;
	Camera c = camera(s, t);
	double hx = s->w / 2.0, hy = s->h / 2.0;
	CamObject mv[CAM_MOVERS]; // movers on Lissajous paths in screen space
	for (int i = 0; i < CAM_MOVERS; i++) {
		mv[i] = s->movers[i];
		mv[i].x = (s->w - mv[i].w) * (0.5 + 0.45 * sin((0.3 + 0.2 * i) * t + s->ph[13] + i));
		mv[i].y = (s->h - mv[i].h) * (0.5 + 0.45 * sin((0.2 + 0.15 * i) * t + s->ph[14] + 2 * i));
	}
	for (int y = 0; y < s->h; y++)
		for (int x = 0; x < s->w; x++) {
			double dx = x - hx, dy = y - hy;
			double u = c.cx + c.cs * dx - c.sn * dy, v = c.cy + c.sn * dx + c.cs * dy;
			double l = bilinear(s->wy, s->ww, s->wh, u, v);
			for (int i = 0; i < CAM_MOVERS; i++)
				if (inside(&mv[i], x, y))
					l = mv[i].luma + texture(&mv[i], x - mv[i].x, y - mv[i].y);
			const CamObject *o = near_at(s, &c, x, y);
			if (o)
				l = o->luma +
				    texture(o, CAM_NEAR_RATE * c.cx + x - o->x, CAM_NEAR_RATE * c.cy + y - o->y);
			uint32_t h = hash3((uint32_t)x, (uint32_t)y, (uint32_t)n ^ s->seed);
			double noise = ((int)(h & 255) + (int)((h >> 8) & 255) - 255) / 64.0 *
				       s->style.noise; // triangular, sd ~1.6
			f->data[0][y * f->linesize[0] + x] = (uint8_t)fmax(16, fmin(235, l * c.gain + noise));
		}
	for (int y = 0; y < s->h / 2; y++)
		for (int x = 0; x < s->w / 2; x++) {
			double dx = 2 * x - hx, dy = 2 * y - hy;
			double u = (c.cx + c.cs * dx - c.sn * dy) / 2, v = (c.cy + c.sn * dx + c.cs * dy) / 2;
			double cu = bilinear(s->wu, s->ww / 2, s->wh / 2, u, v),
			       cv = bilinear(s->wv, s->ww / 2, s->wh / 2, u, v);
			for (int i = 0; i < CAM_MOVERS; i++)
				if (inside(&mv[i], 2 * x, 2 * y))
					cu = 128 + mv[i].tint_u * 2, cv = 128 + mv[i].tint_v * 2;
			const CamObject *o = near_at(s, &c, 2 * x, 2 * y);
			if (o)
				cu = 128 + o->tint_u * 2, cv = 128 + o->tint_v * 2;
			f->data[1][y * f->linesize[1] + x] = (uint8_t)cu;
			f->data[2][y * f->linesize[2] + x] = (uint8_t)cv;
		}
}
