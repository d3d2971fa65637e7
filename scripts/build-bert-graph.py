"""Build a weight-less ONNX graph for a BERT or MPNet sentence-embedding model
whose weights stay in the HF model.safetensors (referenced as ONNX *external
data* by byte offset). No torch, no conversion of weights: the .onnx file is
~100 KB and deterministic; put it next to model.safetensors and load it by path.

usage: python build-bert-graph.py SAFETENSORS_PATH CONFIG_JSON OUT_ONNX [--pool mean|cls] [--no-normalize]
Outputs of the graph: last_hidden_state [B,S,H] and sentence_embedding [B,H]
(mean or cls pooling over attention_mask, then L2-normalised unless --no-normalize).
Inputs: input_ids, attention_mask, and for BERT token_type_ids (all int64 [B,S]).

The architecture is config.json's model_type. "mpnet" (all-mpnet-base-v2) differs
from BERT in: no token types; position ids counted from the pad id (1) over the
real tokens; a relative-position bias added to every layer's attention scores,
one learned value per head for each of 32 buckets of the distance between two
tokens (as transformers' MPNetEncoder.relative_position_bucket, here a constant
table by distance); its weights are named attention.attn.{q,k,v,o}.
"""
import math
import json
import struct
import sys
import os
import onnx
from onnx import helper as h, TensorProto as TP

args = sys.argv[1:]
st_path, cfg_path, out_path = args[0], args[1], args[2]
pool = "mean"
normalize = True
if "--pool" in args:
    pool = args[args.index("--pool") + 1]
if "--no-normalize" in args:
    normalize = False
cfg = json.load(open(cfg_path))
H = cfg["hidden_size"]
NH = cfg["num_attention_heads"]
HD = H // NH
L = cfg["num_hidden_layers"]
EPS = cfg.get("layer_norm_eps", 1e-12)
MPNET = cfg.get("model_type") == "mpnet"

with open(st_path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
base = 8 + n
location = os.path.basename(st_path)
DT = {"F32": TP.FLOAT, "I64": TP.INT64}

inits = []


def ext(name):
    meta = header[name]
    t = TP()
    t.name = name
    t.data_type = DT[meta["dtype"]]
    t.dims.extend(meta["shape"])
    t.data_location = TP.EXTERNAL
    s, e = meta["data_offsets"]
    for k, v in (("location", location), ("offset", str(base + s)), ("length", str(e - s))):
        entry = t.external_data.add()
        entry.key, entry.value = k, v
    inits.append(t)
    return name


def const(name, dtype, dims, vals):
    inits.append(h.make_tensor(name, dtype, dims, vals))
    return name


nodes = []
_c = [0]


def node(op, inputs, **attrs):
    _c[0] += 1
    out = f"{op.lower()}_{_c[0]}"
    nodes.append(h.make_node(op, inputs, [out], name=out, **attrs))
    return out


# constants
const("c_shape_2d", TP.INT64, [2], [-1, H])
const("c_zero_i", TP.INT64, [1], [0])
const("c_one_i", TP.INT64, [1], [1])
const("c_axes_1", TP.INT64, [1], [1])
const("c_axes_12", TP.INT64, [2], [1, 2])
const("c_axes_2", TP.INT64, [1], [2])
const("c_heads", TP.INT64, [2], [NH, HD])
const("c_hidden", TP.INT64, [1], [H])
const("c_one_f", TP.FLOAT, [], [1.0])
const("c_half_f", TP.FLOAT, [], [0.5])
const("c_sqrt2_f", TP.FLOAT, [], [2 ** 0.5])
const("c_neg_f", TP.FLOAT, [], [-3.4028234663852886e38])
const("c_scale_f", TP.FLOAT, [], [1.0 / HD ** 0.5])
const("c_eps_f", TP.FLOAT, [], [1e-12])

# shapes
shp = node("Shape", ["input_ids"])  # [B,S]
B = node("Slice", [shp, "c_zero_i", "c_one_i"])
const("c_two_i", TP.INT64, [1], [2])
S = node("Slice", [shp, "c_one_i", "c_two_i"])
shape_bsh = node("Concat", [B, S, "c_hidden"], axis=0)
shape_bsnd = node("Concat", [B, S, "c_heads"], axis=0)

# embeddings
we = node("Gather", [ext("embeddings.word_embeddings.weight"), "input_ids"], axis=0)
if MPNET:
    # position of each real token, counted from pad_token_id + 1 (transformers'
    # create_position_ids_from_input_ids, over the attention mask instead of the ids so
    # that any pad id works); padding gets pad_token_id
    const("c_pad_i", TP.INT64, [], [cfg["pad_token_id"]])
    const("c_one_s", TP.INT64, [], [1])
    pos = node("CumSum", ["attention_mask", "c_one_s"])
    pos = node("Add", [node("Mul", [pos, "attention_mask"]), "c_pad_i"])
    pe = node("Gather", [ext("embeddings.position_embeddings.weight"), pos], axis=0)
    x = node("Add", [we, pe])
else:
    te = node("Gather", [ext("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)
    pe = node("Slice", [ext("embeddings.position_embeddings.weight"), "c_zero_i", S, "c_zero_i"])
    x = node("Add", [node("Add", [we, te]), pe])
x = node("LayerNormalization", [x, ext("embeddings.LayerNorm.weight"), ext("embeddings.LayerNorm.bias")], axis=-1, epsilon=EPS)

# attention mask bias [B,1,1,S]: 0 for tokens, -max for padding
maskf = node("Cast", ["attention_mask"], to=TP.FLOAT)
inv = node("Sub", ["c_one_f", maskf])
bias = node("Mul", [inv, "c_neg_f"])
bias = node("Unsqueeze", [bias, "c_axes_12"])


def relative_bucket(rel, buckets=32, max_distance=128):
    """transformers' MPNetEncoder.relative_position_bucket for one distance (key - query)."""
    n = -rel
    half = buckets // 2
    ret = half if n < 0 else 0
    n = abs(n)
    exact = half // 2
    if n < exact:
        return ret + n
    large = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (half - exact))
    return ret + min(large, half - 1)


if MPNET:
    # [1, heads, S, S]: the learned bias of each (query, key) pair's distance bucket, the same in
    # every layer. float32 and float64 give the same buckets for every distance up to 512.
    span = cfg["max_position_embeddings"] - cfg["pad_token_id"] - 1
    const("c_buckets", TP.INT64, [2 * span - 1], [relative_bucket(r, cfg.get("relative_attention_num_buckets", 32)) for r in range(-(span - 1), span)])
    const("c_span_i", TP.INT64, [], [span - 1])
    const("c_zero_s", TP.INT64, [], [0])
    const("c_axes_0", TP.INT64, [1], [0])
    steps = node("Range", ["c_zero_s", node("Squeeze", [S, "c_zero_i"]), "c_one_s"])  # [S]
    rel = node("Sub", [node("Unsqueeze", [steps, "c_axes_0"]), node("Unsqueeze", [steps, "c_axes_1"])])  # key - query
    buckets = node("Gather", ["c_buckets", node("Add", [rel, "c_span_i"])], axis=0)  # [S,S]
    pbias = node("Gather", [ext("encoder.relative_attention_bias.weight"), buckets], axis=0)  # [S,S,NH]
    pbias = node("Unsqueeze", [node("Transpose", [pbias], perm=[2, 0, 1]), "c_axes_0"])
    bias = node("Add", [pbias, bias])  # [B,NH,S,S]


def linear(x2d, prefix):
    return node("Gemm", [x2d, ext(prefix + ".weight"), ext(prefix + ".bias")], transB=1)


ATTN = "attention.attn." if MPNET else "attention.self."
QKV = ("q", "k", "v") if MPNET else ("query", "key", "value")
ATTN_OUT = "attention.attn.o" if MPNET else "attention.output.dense"
ATTN_NORM = "attention.LayerNorm" if MPNET else "attention.output.LayerNorm"

for i in range(L):
    p = f"encoder.layer.{i}."
    x2 = node("Reshape", [x, "c_shape_2d"])
    heads = []
    for nm in QKV:
        y = linear(x2, p + ATTN + nm)
        y = node("Reshape", [y, shape_bsnd])
        heads.append(y)
    q = node("Transpose", [heads[0]], perm=[0, 2, 1, 3])
    k = node("Transpose", [heads[1]], perm=[0, 2, 3, 1])
    v = node("Transpose", [heads[2]], perm=[0, 2, 1, 3])
    sc = node("Mul", [node("MatMul", [q, k]), "c_scale_f"])
    sc = node("Add", [sc, bias])
    pr = node("Softmax", [sc], axis=-1)
    ctx = node("MatMul", [pr, v])
    ctx = node("Transpose", [ctx], perm=[0, 2, 1, 3])
    ctx = node("Reshape", [ctx, "c_shape_2d"])
    ao = linear(ctx, p + ATTN_OUT)
    a = node("Add", [ao, x2])
    a = node("LayerNormalization", [a, ext(p + ATTN_NORM + ".weight"), ext(p + ATTN_NORM + ".bias")], axis=-1, epsilon=EPS)
    it = linear(a, p + "intermediate.dense")
    # exact (erf) GELU, as in BERT's and MPNet's "gelu"
    g = node("Mul", [node("Mul", [it, "c_half_f"]), node("Add", [node("Erf", [node("Div", [it, "c_sqrt2_f"])]), "c_one_f"])])
    o = linear(g, p + "output.dense")
    o = node("Add", [o, a])
    o = node("LayerNormalization", [o, ext(p + "output.LayerNorm.weight"), ext(p + "output.LayerNorm.bias")], axis=-1, epsilon=EPS)
    x = node("Reshape", [o, shape_bsh])

nodes.append(h.make_node("Identity", [x], ["last_hidden_state"], name="out_hidden"))

if pool == "mean":
    m3 = node("Unsqueeze", [maskf, "c_axes_2"])  # [B,S,1]
    summed = node("ReduceSum", [node("Mul", [x, m3]), "c_axes_1"], keepdims=0)
    cnt = node("Max", [node("ReduceSum", [m3, "c_axes_1"], keepdims=0), "c_eps_f"])
    pooled = node("Div", [summed, cnt])
else:  # cls
    pooled = node("Gather", [x, "c_zero_i"], axis=1)
    pooled = node("Squeeze", [pooled, "c_axes_1"])
if normalize:
    nrm = node("ReduceL2", [pooled], axes=[1], keepdims=1)
    pooled = node("Div", [pooled, node("Max", [nrm, "c_eps_f"])])
nodes.append(h.make_node("Identity", [pooled], ["sentence_embedding"], name="out_sentence"))

input_names = ("input_ids", "attention_mask") if MPNET else ("input_ids", "attention_mask", "token_type_ids")
inputs = [h.make_tensor_value_info(nm, TP.INT64, ["batch", "sequence"]) for nm in input_names]
outputs = [
    h.make_tensor_value_info("last_hidden_state", TP.FLOAT, ["batch", "sequence", H]),
    h.make_tensor_value_info("sentence_embedding", TP.FLOAT, ["batch", H]),
]
graph = h.make_graph(nodes, "mpnet_sentence_embedding" if MPNET else "bert_sentence_embedding", inputs, outputs, initializer=inits)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="build_minilm_graph.py")
model.ir_version = 8
model.metadata_props.add(key="weights", value=f"{location} (HF safetensors, referenced as ONNX external data)")
model.metadata_props.add(key="pooling", value=pool + ("+l2" if normalize else ""))
onnx.save(model, out_path)
onnx.checker.check_model(out_path)  # by path, so the external data (the .safetensors beside it) is checked too
print("wrote", out_path, os.path.getsize(out_path), "bytes;", len(nodes), "nodes;", len(inits), "initializers")
