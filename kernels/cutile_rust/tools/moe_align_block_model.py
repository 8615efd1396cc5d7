#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Developer tool: a numpy model of src/moe/kernels.rs's moe_align_block (its four passes over
256-entry chunks, as written) against reference/src/ops/moe_align_block.cpp's alignment, on the
reference's skewed routing (expert = E u^2, distinct per token): the total, every bucket in the
reference's stable order, the padding, the block experts, and every sorted_token_ids slot
written exactly once. It models the kernel's logic, not the cuTile compiler.
Usage: .venv/bin/python kernels/cutile_rust/tools/moe_align_block_model.py
"""
import numpy as np


def kernel(ids, E, block, BT=256):
    numel=len(ids); E2=1<<(E-1).bit_length(); maxp=numel+E*(block-1); maxb=(maxp+block-1)//block
    ex=np.arange(E2); counts=np.zeros(E2,int)
    for c in range((numel+BT-1)//BT):
        at=c*BT+np.arange(BT)
        idt=np.array([ids[a] if a<numel else 0 for a in at]); valid=(at<numel)[:,None]
        hit=(idt[:,None]==ex[None,:])&valid; counts+=hit.sum(0)
    padded=(counts+block-1)//block*block; ends=np.cumsum(padded); starts=ends-padded; total=padded.sum()
    sorted_=np.full(maxp,-7); written=np.zeros(maxp,int); nxt=starts.copy()
    for c in range((numel+BT-1)//BT):
        at=c*BT+np.arange(BT); ok=at<numel; idt=np.array([ids[a] if a<numel else 0 for a in at])
        hit=(idt[:,None]==ex[None,:])&ok[:,None]; h=hit.astype(int); rank=np.cumsum(h,0)
        slot=rank-1+nxt[None,:]; pos=np.where(hit,slot,0).sum(1)
        for p,a,o in zip(pos,at,ok):
            if o: sorted_[p]=a; written[p]+=1
        nxt+=h.sum(0)
    filled=starts+counts
    for c in range((maxp+BT-1)//BT):
        p=c*BT+np.arange(BT); pad_in=(p[:,None]>=filled[None,:])&(p[:,None]<ends[None,:])
        pad=(pad_in.sum(1)>0)|((p>=total)&(p<maxp))
        for pp,m in zip(p,pad):
            if m: sorted_[pp]=numel; written[pp]+=1
    eids=np.zeros(maxb,int)
    for b in range(maxb):
        pos=b*block; inb=(pos>=starts)&(pos<ends); eids[b]=(ex*inb).sum()
    return sorted_,written,eids,total
def ref(ids,E,block):
    numel=len(ids); cnt=np.bincount(ids,minlength=E); st=[0]
    for e in range(E): st.append(st[-1]+(cnt[e]+block-1)//block*block)
    srt=np.full(st[-1],numel); f=list(st)
    for i,e in enumerate(ids): srt[f[e]]=i; f[e]+=1
    eids=[e for e in range(E) for _ in range(st[e]//block, st[e+1]//block)]
    return srt,np.array(eids),st[-1]
rng=np.random.default_rng(3)
for M,k,E,blk in [(8,2,64,128),(3,1,40,16),(64,2,8,128),(64,2,8,64),(128,4,16,64),(256,6,32,128),(512,6,64,64),(512,6,64,128),(37,3,12,16)]:
    ids=[]
    for t in range(M):
        row=[]
        while len(row)<k:
            e=int(E*rng.uniform()**2)
            while e in row: e=(e+1)%E
            row.append(e)
        ids+=row
    ids=np.array(ids)
    s,w,e,tot=kernel(ids,E,blk); rs,re,rt=ref(ids,E,blk)
    assert tot==rt and (w==1).all() and (s[:rt]==rs).all() and (e[:len(re)]==re).all() and (s[rt:]==len(ids)).all(), (M,k,E,blk)
    print(M,k,E,blk,"ok total",tot,"empty experts",int((np.bincount(ids,minlength=E)==0).sum()))
