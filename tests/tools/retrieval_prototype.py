#!/usr/bin/python3
"""The PyTorch GPT behind docs/models.md's "Lost in the middle" training figures (not a test fixture).

A 2-layer GPT (pre-LN, tied head, RoPE or learned positions) trained on key-value retrieval in the app's formats,
to tell the task's difficulty from the app's trainer. The 2026-11-28 runs, one core each:
    /usr/bin/python3 tests/tools/retrieval_prototype.py --fmt adj --min-pairs 2 --steps 6000 --every 500
        [--clip 1 --linear 1] [--bytes 1] [--seed N]
--fmt app is the earlier "k=48 … ?a>09", --fmt adj the current "k48 … ?a48"; --min-pairs 2 mixes 2 … 10 pairs in
every batch; --clip takes the app's clipping, --linear a schedule falling to a tenth (the app's falls along a cosine), --bytes the
app's 256-id vocabulary.
"""
import argparse, math, random, string, time
import torch, torch.nn as nn, torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument('--pairs', type=int, default=10)
p.add_argument('--min-pairs', type=int, default=10)   # mixed: each context has U[min,pairs] pairs
p.add_argument('--grow', type=int, default=0)         # steps over which min pair count grows from 2 to pairs (curriculum)
p.add_argument('--questions', type=int, default=4)
p.add_argument('--d', type=int, default=128)
p.add_argument('--layers', type=int, default=2)
p.add_argument('--heads', type=int, default=4)
p.add_argument('--lr', type=float, default=1e-3)
p.add_argument('--wd', type=float, default=0.0)
p.add_argument('--steps', type=int, default=3000)
p.add_argument('--batch', type=int, default=64)
p.add_argument('--warmup', type=int, default=200)
p.add_argument('--rope', type=int, default=1)
p.add_argument('--seed', type=int, default=1)
p.add_argument('--every', type=int, default=250)
p.add_argument('--fmt', default='app')
p.add_argument('--clip', type=float, default=0)
p.add_argument('--linear', type=int, default=0)
p.add_argument('--bytes', type=int, default=0)
a = p.parse_args()
torch.manual_seed(a.seed); random.seed(a.seed); torch.set_num_threads(1)
chars = sorted(set(string.ascii_lowercase + string.digits + ' =?>'))
V = len(chars); idx = {c: i for i, c in enumerate(chars)}
if a.bytes: V = 256; idx = {c: ord(c) for c in chars}

def example(npairs, asked_list):
    keys = random.sample(string.ascii_lowercase, npairs)
    vals = [''.join(random.choice(string.digits) for _ in range(2)) for _ in keys]
    sep, ask = ('=', '>') if a.fmt == 'app' else ('', '')
    s = ' '.join(k + sep + v for k, v in zip(keys, vals))
    tg = []
    for q in asked_list:
        s += ' ?' + keys[q] + ask
        tg.append(len(s) - 1)
        s += vals[q]
    toks = [idx[c] for c in s]
    tgt = [-100] * len(toks)
    for t in tg:
        tgt[t] = toks[t + 1]; tgt[t + 1] = toks[t + 2]
    return toks, tgt

def batch(step):
    lo = a.min_pairs
    if a.grow:
        lo = min(a.pairs, 2 + (a.pairs - 2) * step // a.grow)
    X, Y = [], []
    for _ in range(a.batch):
        n = random.randint(lo, a.pairs) if not a.grow else random.randint(max(2, lo - 1), lo)
        t, y = example(n, [random.randrange(n) for _ in range(a.questions)])
        X.append(t); Y.append(y)
    L = max(map(len, X))
    X = [x + [0] * (L - len(x)) for x in X]; Y = [y + [-100] * (L - len(y)) for y in Y]
    return torch.tensor(X), torch.tensor(Y)

def rope(x):  # x: B H T D, interleaved
    T, D = x.shape[-2], x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, D, 2).float() / D))
    ang = torch.arange(T).float()[:, None] * inv[None]
    c, s = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * c - x2 * s, x1 * s + x2 * c], -1).flatten(-2)

class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1 = nn.LayerNorm(a.d); s.qkv = nn.Linear(a.d, 3 * a.d); s.o = nn.Linear(a.d, a.d)
        s.ln2 = nn.LayerNorm(a.d); s.f1 = nn.Linear(a.d, 4 * a.d); s.f2 = nn.Linear(4 * a.d, a.d)
    def forward(s, x, keep=None):
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, -1)
        q, k, v = [t.view(B, T, a.heads, C // a.heads).transpose(1, 2) for t in (q, k, v)]
        if a.rope: q, k = rope(q), rope(k)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(C // a.heads)
        att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf')).softmax(-1)
        if keep is not None: keep.append(att.detach())
        x = x + s.o((att @ v).transpose(1, 2).reshape(B, T, C))
        return x + s.f2(F.gelu(s.f1(s.ln2(x))))

class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte = nn.Embedding(V, a.d); s.wpe = nn.Embedding(256, a.d)
        s.blocks = nn.ModuleList(Block() for _ in range(a.layers)); s.lnf = nn.LayerNorm(a.d)
        for m in s.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)): nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear): nn.init.zeros_(m.bias)
    def forward(s, x, keep=None):
        h = s.wte(x)
        if not a.rope: h = h + s.wpe(torch.arange(x.shape[1]))
        for b in s.blocks: h = b(h, keep)
        return s.lnf(h) @ s.wte.weight.T

m = GPT()
opt = torch.optim.AdamW(m.parameters(), lr=a.lr, weight_decay=a.wd, betas=(0.9, 0.95))
sched = (lambda st: min(1, (st + 1) / a.warmup) * (1 - 0.9 * st / a.steps)) if a.linear else (lambda st: min(1, (st + 1) / a.warmup) * 0.5 * (1 + math.cos(math.pi * min(st, a.steps) / a.steps)))

def evaluate(n=40):
    m.eval(); res = []
    with torch.no_grad():
        for pos in range(a.pairs):
            X, Y = zip(*[example(a.pairs, [pos]) for _ in range(n)])
            X, Y = torch.tensor(X), torch.tensor(Y)
            keep = []
            pr = m(X, keep).argmax(-1); msk = Y != -100
            ok = (pr == Y) & msk
            res.append((ok.sum().item() / msk.sum().item(), ok.sum(1).eq(2).float().mean().item()))
    m.train(); return res

t0 = time.time()
for st in range(a.steps):
    for g in opt.param_groups: g['lr'] = a.lr * sched(st)
    X, Y = batch(st)
    loss = F.cross_entropy(m(X).view(-1, V), Y.view(-1), ignore_index=-100)
    opt.zero_grad(); loss.backward()
    if a.clip: torch.nn.utils.clip_grad_norm_(m.parameters(), a.clip)
    opt.step()
    if (st + 1) % a.every == 0 or st + 1 == a.steps:
        r = evaluate()
        dig = sum(x for x, _ in r) / len(r); ex = sum(y for _, y in r) / len(r)
        print(f'{st+1} loss {loss.item():.3f} digits {dig:.3f} exact {ex:.3f} by-pos ' + ' '.join(f'{y:.2f}' for _, y in r)
              + f'  {time.time()-t0:.0f}s', flush=True)
