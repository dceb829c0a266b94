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
