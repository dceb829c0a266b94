"""Small offline .aur programs shared by the training tests (aurane.data sources, tiny models)."""

from __future__ import annotations

CLASSIFIER = """
experiment Small:
    seed = 3
    device = "cpu"

dataset points:
    from aurane.data.SyntheticImages
    size = 43
    image_size = (1, 6, 6)
    num_classes = 3
    batch = 8

dataset held_out:
    from aurane.data.SyntheticImages
    size = 21
    image_size = (1, 6, 6)
    num_classes = 3
    train = false
    batch = 8

model Net:
    input_shape = (1, 6, 6)
    def forward(x):
        x -> flatten() -> dense(16).relu -> dropout(0.3) -> dense(3)

train Net on points:
    validate_on = held_out
    epochs = {epochs}
    optimizer = adam(lr=0.01)
    scheduler = step_lr(step_size=1, gamma=0.7)
    metrics = [accuracy, f1]
    gradient_clip = 1.0
    checkpoint_dir = "{folder}"
    save_best = true
    checkpoint_every = 2
"""

GAN = """
experiment Small:
    seed = 5
    device = "cpu"

dataset pictures:
    from aurane.data.SyntheticImages
    size = 20
    image_size = (1, 4, 4)
    num_classes = 2
    batch = 6

model Maker:
    input_shape = (8,)
    def forward(z):
        z -> dense(16).relu -> batch_norm() -> dense(16).tanh -> reshape(1, 4, 4)

model Judge:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(16).leaky_relu(0.2) -> batch_norm() -> dropout(0.2) -> dense(1).sigmoid

train_gan Maker and Judge on pictures:
    epochs = {epochs}
    generator_optimizer = adam(lr=0.002, betas=(0.5, 0.999))
    discriminator_optimizer = adam(lr=0.002, betas=(0.5, 0.999))
    discriminator_steps = 2
    generator_steps = 1
    num_samples = 4
    save_dir = "{folder}/samples"
    sample_format = "both"
    checkpoint_dir = "{folder}"
"""

# Issue 27: a zoo-style GPT (nanoGPT's block, tied output weights), tiny, without dropout or
# batch norm, so one process and two (DDP, FSDP) train the same weights; the samples in
# order, so two processes of `batch` see together what one process of 2 x `batch` sees.
TINY_GPT = """
experiment Tiny:
    seed = 7
    device = "cpu"

n_embd = 16
n_head = 2
block = 8

dataset text:
    from aurane.data.SyntheticTokens
    size = 32
    sequence_length = block
    vocab_size = 32
    batch = {batch}
    shuffle = false

model Block:
    def forward(x):
        h = layer_norm(x) as ln_1
        qkv = dense(h, 3 * n_embd, bias=false) as attn.c_attn  # (a key bias has no gradient)
        q, k, v = split(qkv, n_embd, dim=-1)
        q = transpose(reshape(q, block, n_head, n_embd // n_head), 1, 2)
        k = transpose(reshape(k, block, n_head, n_embd // n_head), 1, 2)
        v = transpose(reshape(v, block, n_head, n_embd // n_head), 1, 2)
        y = scaled_dot_product_attention(q, k, v, causal=true)
        y = reshape(transpose(y, 1, 2), block, n_embd)
        y = dense(y, n_embd) as attn.c_proj
        x = add(x, y)
        h = layer_norm(x) as ln_2
        h = dense(h, 4 * n_embd).gelu as mlp.c_fc
        h = dense(h, n_embd) as mlp.c_proj
        return add(x, h)

model GPT:
    input_shape = (block,)
    input_dtype = int64
    def forward(idx):
        x = embedding(idx, 32, n_embd) as wte
        x -> repeat(Block(), 2) as h -> layer_norm() as ln_f -> dense(32, bias=false, tie=wte) as lm_head

train GPT on text:
    epochs = {epochs}
    loss = cross_entropy
    optimizer = adamw(lr=0.01, weight_decay=0.1)
    gradient_clip = 1.0
    checkpoint_dir = "{folder}"
{extra}"""
