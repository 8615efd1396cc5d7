#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Developer tool: numpy models of src/moe/kernels.rs's moe_align_block (the single_block
variant: its four passes over 256-entry chunks, as written) and of the parallel plan
(moe_align_count then moe_align_scatter over a [P, E2] counts scratch, with src/moe/plan.rs's
align_grid) against reference/src/ops/moe_align_block.cpp's alignment, on the
reference's skewed routing (expert = E u^2, distinct per token): the total, every bucket in the
reference's stable order, the padding, the block experts, and every sorted_token_ids slot
written exactly once (single block) or the padding fill then every assignment slot written
exactly once (parallel). It models the kernels' logic, not the cuTile compiler.
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
def p2(n): return 1<<(max(n,1)-1).bit_length()
def cdiv(a,b): return (a+b-1)//b
def align_grid(numel,E,block,TILE=8192):
    e2=p2(E); programs=max(E,cdiv(numel,128)); bt=max(p2(cdiv(numel,programs)),16); p=p2(cdiv(numel,bt))
    while p*e2>TILE and bt*e2<TILE: bt*=2; p=p2(cdiv(numel,bt))
    assert p*e2<=TILE and bt*e2<=TILE
    maxp=numel+E*(block-1); maxb=cdiv(maxp,block)
    ft=min(max(p2(cdiv(maxp,p)),16),1024); fill_per=cdiv(cdiv(maxp,ft),p)
    bb=min(max(p2(cdiv(maxb,p)),8),64); blocks_per=cdiv(cdiv(maxb,bb),p)
    return bt,p,ft,fill_per,bb,blocks_per
def parallel(ids,E,block):
    numel=len(ids); E2=p2(E); maxp=numel+E*(block-1); maxb=cdiv(maxp,block)
    bt,P,ft,fill_per,bb,blocks_per=align_grid(numel,E,block); ex=np.arange(E2)
    counts=np.full((P,E2),-99); sorted_=np.full(maxp,-7); fills=np.zeros(maxp,int)
    for p in range(P):  # moe_align_count
        at=p*bt+np.arange(bt); idt=np.array([ids[a] if a<numel else 5 for a in at])
        hit=(idt[:,None]==ex[None,:])&(at<numel)[:,None]; counts[p]=hit.sum(0)
        tiles=cdiv(maxp,ft); first=p*fill_per
        for j in range(min(max(tiles-first,0),fill_per)):
            for q in range((first+j)*ft,min((first+j+1)*ft,maxp)): sorted_[q]=numel; fills[q]+=1
    assert (fills==1).all()
    written=np.zeros(maxp,int); eids=np.full(maxb,-5); tot_out=None
    for p in range(P):  # moe_align_scatter
        tot=counts.sum(0); padded=(tot+block-1)//block*block; ends=np.cumsum(padded); starts=ends-padded; total=padded.sum()
        prior=np.where((np.arange(P)<p)[:,None],counts,0).sum(0); nxt=starts+prior
        at=p*bt+np.arange(bt); ok=at<numel; idt=np.array([ids[a] if a<numel else 5 for a in at])
        hit=(idt[:,None]==ex[None,:])&ok[:,None]; h=hit.astype(int); rank=np.cumsum(h,0)
        pos=np.where(hit,rank-1+nxt[None,:],0).sum(1)
        for q,a,o in zip(pos,at,ok):
            if o: sorted_[q]=a; written[q]+=1
        if p==0: tot_out=total
        tiles=cdiv(maxb,bb); first=p*blocks_per
        for j in range(min(max(tiles-first,0),blocks_per)):
            b=(first+j)*bb+np.arange(bb); s0=b*block; owner=(s0[:,None]>=ends[None,:]).sum(1); e=np.where(s0<total,owner,0)
            for bi,ei in zip(b,e):
                if bi<maxb: eids[bi]=ei
    assert (written<=1).all() and (eids>=0).all()
    return sorted_,eids,tot_out
def ref(ids,E,block):
    numel=len(ids); cnt=np.bincount(ids,minlength=E); st=[0]
    for e in range(E): st.append(st[-1]+(cnt[e]+block-1)//block*block)
    srt=np.full(st[-1],numel); f=list(st)
    for i,e in enumerate(ids): srt[f[e]]=i; f[e]+=1
    eids=[e for e in range(E) for _ in range(st[e]//block, st[e+1]//block)]
    return srt,np.array(eids),st[-1]
rng=np.random.default_rng(3)
for M,k,E,blk in [(8,2,64,128),(3,1,40,16),(64,2,8,128),(64,2,8,64),(128,4,16,64),(256,6,32,128),(512,6,64,64),(512,6,64,128),(37,3,12,16),(128,8,256,16),(1000,1,5,32)]:
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
    ps,pe,pt=parallel(ids,E,blk)
    assert pt==rt and (ps[:rt]==rs).all() and (pe[:len(re)]==re).all() and (ps[rt:]==len(ids)).all(), ("parallel",M,k,E,blk)
    print(M,k,E,blk,"ok (single_block and parallel", align_grid(len(ids),E,blk), ") total",tot,"empty experts",int((np.bincount(ids,minlength=E)==0).sum()))
