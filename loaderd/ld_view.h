// The eval views of LaViLa's multi-view test (its EGTEA protocol): which frames a temporal clip
// takes and where a spatial crop sits. Private to the plan (ld_plan.c).
#ifndef LOADERD_LD_VIEW_H
#define LOADERD_LD_VIEW_H
// defines: LD_VIEW_BLANK, ld_view_check, ld_view_frames, ld_view_slide

#include "loader.h" // defines: LdParams, LdCropPos, LdCrop

#include <stddef.h>
#include <stdint.h>

#define LD_VIEW_BLANK UINT64_MAX // a frame index past the sample's end: a black frame

// 0, or -LD_ERR_MANIFEST with a reason when p's view fields are out of range or set in training
int ld_view_check(const LdParams *p, char *err, size_t errlen);
// idx (p->frames): the frames within the sample's n of view clip p->view_clip (p->stride > 0)
void ld_view_frames(const LdParams *p, uint64_t n, uint64_t *idx);
// moves the centred eval box c (even sizes) of a w x h source to pos along the long side
void ld_view_slide(LdCropPos pos, int w, int h, LdCrop *c);

#endif
