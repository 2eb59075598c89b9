"""GPT-2 in NumPy, forward and backward, written for this course: the truth the kernels' gradients are
checked against (in float64) and the CPU fallback that trains a small model (in float32).

    Config, CONFIGS        model sizes (layers L, width C, heads NH, context T, vocabulary V)
    init_params            GPT-2's initialisation, float32, one dict of named arrays
    param_order            the names in the flat AdamW buffer: weight-decayed matrices first
    forward                logits and the mean cross-entropy loss, with a cache for backward
    backward               d(loss)/d(every parameter), from the cache
    adamw_step             PyTorch's AdamW on the dict (weight decay on matrices only)
    sample                 text from the model, one byte at a time

The model (GPT-2's): x = wte[tokens] + wpe[positions]; per layer
h = x + proj(attention(ln1(x))), x' = h + fcproj(gelu(fc(ln2(h)))); logits = lnf(x) wte^T (the token
embedding is tied to the output layer). Weights are stored (in, out), as the course's linear kernel
reads them. Every operation runs in the dtype of the parameters passed (`dtype=`).
"""

import math
from dataclasses import dataclass

import numpy as np

EPS = 1e-5
GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715


@dataclass(frozen=True)
class Config:
    L: int  # layers
    C: int  # width
    NH: int  # heads
    T: int  # context length
    V: int = 256  # vocabulary (bytes)

    def n_params(self) -> int:
        return sum(int(np.prod(s)) for s in param_shapes(self).values())


CONFIGS = {
    "check": Config(L=1, C=8, NH=2, T=4),  # the simulator: gradient check, a step in seconds
    "tiny": Config(L=2, C=32, NH=2, T=32),  # trains on a CPU in under a minute
    "small": Config(L=2, C=64, NH=4, T=64),  # the GPU's default
    "medium": Config(L=4, C=128, NH=4, T=128),
}

LAYER = ("ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_proj", "b_proj")
LAYER += ("ln2_w", "ln2_b", "w_fc", "b_fc", "w_fcproj", "b_fcproj")
MATRICES = ("w_qkv", "w_proj", "w_fc", "w_fcproj")


def param_shapes(cfg: Config) -> dict:
    C = cfg.C
    per = dict(
        ln1_w=(C,), ln1_b=(C,), w_qkv=(C, 3 * C), b_qkv=(3 * C,), w_proj=(C, C), b_proj=(C,),
        ln2_w=(C,), ln2_b=(C,), w_fc=(C, 4 * C), b_fc=(4 * C,), w_fcproj=(4 * C, C), b_fcproj=(C,),
    )  # fmt: skip
    shapes = {"wte": (cfg.V, C), "wpe": (cfg.T, C)}
    for layer in range(cfg.L):
        shapes.update({f"{layer}.{k}": s for k, s in per.items()})
    shapes.update(lnf_w=(C,), lnf_b=(C,))
    return shapes


def param_order(cfg: Config) -> tuple[list, int]:
    """(names in flat-buffer order, number of leading elements that get weight decay)."""
    names = list(param_shapes(cfg))
    shapes = param_shapes(cfg)
    decay = [n for n in names if len(shapes[n]) == 2]
    rest = [n for n in names if len(shapes[n]) != 2]
    return decay + rest, sum(int(np.prod(shapes[n])) for n in decay)


def init_params(cfg: Config, seed: int = 0) -> dict:
    """GPT-2's: weights N(0, 0.02), the two output projections by 1 / sqrt(2 L), LayerNorm 1 and 0,
    biases 0. float32."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in param_shapes(cfg).items():
        short = name.split(".")[-1]
        if short.endswith("_w") and short.startswith("ln"):
            out[name] = np.ones(shape, np.float32)
        elif len(shape) == 1:
            out[name] = np.zeros(shape, np.float32)
        else:
            std = 0.02 / math.sqrt(2 * cfg.L) if short in ("w_proj", "w_fcproj") else 0.02
            out[name] = rng.normal(0, std, shape).astype(np.float32)
    return out


def layernorm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + EPS)
    xhat = (x - mean) * rstd
    return xhat * w + b, (xhat, rstd)


def layernorm_back(dout, w, cache):
    xhat, rstd = cache
    dw = (dout * xhat).reshape(-1, xhat.shape[-1]).sum(0)
    db = dout.reshape(-1, xhat.shape[-1]).sum(0)
    g = dout * w
    dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
    return dx, dw, db


def gelu(x):
    return 0.5 * x * (1 + np.tanh(GELU_K * (x + GELU_C * x**3)))


def gelu_back(dout, x):
    th = np.tanh(GELU_K * (x + GELU_C * x**3))
    return dout * (0.5 * (1 + th) + 0.5 * x * (1 - th * th) * GELU_K * (1 + 3 * GELU_C * x * x))


def attention(qkv, NH):
    """Causal multi-head attention of (B, T, 3C): the output (B, T, C) and the probabilities."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // NH
    q, k, v = (qkv[..., i * C : (i + 1) * C].reshape(B, T, NH, hs).transpose(0, 2, 1, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) * qkv.dtype.type(1 / math.sqrt(hs))
    s = np.where(np.tri(T, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    return y, (q, k, v, p)


def attention_back(dy, cache):
    q, k, v, p = cache
    B, NH, T, hs = q.shape
    do = dy.reshape(B, T, NH, hs).transpose(0, 2, 1, 3)
    dp = do @ v.transpose(0, 1, 3, 2)
    dv = p.transpose(0, 1, 3, 2) @ do
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))  # the softmax backward: the row dot product
    scale = q.dtype.type(1 / math.sqrt(hs))
    dq = ds @ k * scale
    dk = ds.transpose(0, 1, 3, 2) @ q * scale
    merge = [d.transpose(0, 2, 1, 3).reshape(B, T, NH * hs) for d in (dq, dk, dv)]
    return np.concatenate(merge, axis=-1)


def forward(params: dict, tokens: np.ndarray, targets, cfg: Config):
    """(logits (B, T, V), mean loss or None, cache). Runs in the parameters' dtype."""
    B, T = tokens.shape
    x = params["wte"][tokens] + params["wpe"][:T]
    cache = {"tokens": tokens, "layers": []}
    for layer in range(cfg.L):
        P = {k: params[f"{layer}.{k}"] for k in LAYER}
        a1, ln1 = layernorm(x, P["ln1_w"], P["ln1_b"])
        qkv = a1 @ P["w_qkv"] + P["b_qkv"]
        y, att = attention(qkv, cfg.NH)
        h = x + y @ P["w_proj"] + P["b_proj"]
        a2, ln2 = layernorm(h, P["ln2_w"], P["ln2_b"])
        fc = a2 @ P["w_fc"] + P["b_fc"]
        f = gelu(fc)
        x_next = h + f @ P["w_fcproj"] + P["b_fcproj"]
        cache["layers"].append(dict(a1=a1, ln1=ln1, att=att, y=y, a2=a2, ln2=ln2, fc=fc, f=f))
        x = x_next
    xf, lnf = layernorm(x, params["lnf_w"], params["lnf_b"])
    logits = xf @ params["wte"].T
    cache.update(xf=xf, lnf=lnf, logits=logits, targets=targets)
    loss = None
    if targets is not None:
        m = logits.max(-1, keepdims=True)
        lse = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[..., 0]
        picked = np.take_along_axis(logits, targets[..., None], -1)[..., 0]
        loss = float((lse - picked).mean())
    return logits, loss, cache


def backward(params: dict, cache: dict, cfg: Config) -> dict:
    """d(mean loss)/d(parameter) for every parameter, same names and dtype."""
    logits, targets = cache["logits"], cache["targets"]
    B, T, V = logits.shape
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dlogits = p
    np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(p, targets[..., None], -1) - 1, -1)
    dlogits /= B * T
    g = {}
    g["wte"] = dlogits.reshape(-1, V).T @ cache["xf"].reshape(-1, cfg.C)
    dx, g["lnf_w"], g["lnf_b"] = layernorm_back(dlogits @ params["wte"], params["lnf_w"], cache["lnf"])
    for layer in reversed(range(cfg.L)):
        P = {k: params[f"{layer}.{k}"] for k in LAYER}
        c = cache["layers"][layer]
        G = {}
        # x' = h + fcproj(gelu(fc(ln2(h)))): the residual passes dx through and adds the branch's
        G["w_fcproj"] = c["f"].reshape(-1, 4 * cfg.C).T @ dx.reshape(-1, cfg.C)
        G["b_fcproj"] = dx.reshape(-1, cfg.C).sum(0)
        dfc = gelu_back(dx @ P["w_fcproj"].T, c["fc"])
        G["w_fc"] = c["a2"].reshape(-1, cfg.C).T @ dfc.reshape(-1, 4 * cfg.C)
        G["b_fc"] = dfc.reshape(-1, 4 * cfg.C).sum(0)
        da2, G["ln2_w"], G["ln2_b"] = layernorm_back(dfc @ P["w_fc"].T, P["ln2_w"], c["ln2"])
        dh = dx + da2
        G["w_proj"] = c["y"].reshape(-1, cfg.C).T @ dh.reshape(-1, cfg.C)
        G["b_proj"] = dh.reshape(-1, cfg.C).sum(0)
        dqkv = attention_back(dh @ P["w_proj"].T, c["att"])
        G["w_qkv"] = c["a1"].reshape(-1, cfg.C).T @ dqkv.reshape(-1, 3 * cfg.C)
        G["b_qkv"] = dqkv.reshape(-1, 3 * cfg.C).sum(0)
        da1, G["ln1_w"], G["ln1_b"] = layernorm_back(dqkv @ P["w_qkv"].T, P["ln1_w"], c["ln1"])
        dx = dh + da1
        g.update({f"{layer}.{k}": v for k, v in G.items()})
    np.add.at(g["wte"], cache["tokens"].reshape(-1), dx.reshape(-1, cfg.C))
    g["wpe"] = np.zeros_like(params["wpe"])
    g["wpe"][:T] = dx.sum(0)
    return g


ADAM = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0)


def adamw_step(params, grads, state, step, lr=None, **opt):
    """PyTorch's AdamW (decoupled weight decay on matrices only), in place; `state` holds m and v."""
    o = {**ADAM, **opt}
    lr = o["lr"] if lr is None else lr
    b1, b2 = o["beta1"], o["beta2"]
    for name, p in params.items():
        g = grads[name]
        m, v = state.setdefault(name, (np.zeros_like(p), np.zeros_like(p)))
        m[:] = b1 * m + (1 - b1) * g
        v[:] = b2 * v + (1 - b2) * g * g
        if p.ndim == 2:
            p *= 1 - lr * o["weight_decay"]
        p -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + o["eps"])


def sample(logits_fn, prompt: np.ndarray, n: int, T: int, seed: int = 0, temperature: float = 1.0):
    """n more tokens after `prompt`, drawn from softmax(logits / temperature) (temperature 0: the most
    likely token, greedy); `logits_fn(tokens (1, t))` returns logits (1, t, V). The window slides once
    the context is full."""
    rng = np.random.default_rng(seed)
    toks = list(int(t) for t in prompt)
    for _ in range(n):
        window = np.array(toks[-T:], np.int32)[None]
        if temperature == 0:
            toks.append(int(np.argmax(logits_fn(window)[0, -1])))
            continue
        z = logits_fn(window)[0, -1].astype(np.float64) / temperature
        pr = np.exp(z - z.max())
        toks.append(int(rng.choice(len(pr), p=pr / pr.sum())))
    return np.array(toks[len(prompt) :], np.int32)
