"""Whole models for the model tests and benchmarks (tests/python/test_models.py,
bench/bench_models.py), each written once against a namespace: `TORCH`
(torch.nn, torch.nn.functional, torch) or `KILN` (kiln.nn,
kiln.nn.functional, kiln). Built with TORCH they are ordinary torch modules
that torch scripts, traces and saves; built with KILN they are the same model
written with kiln.nn, which takes the torch model's state dict.

The four torchvision networks follow torchvision 0.14's architecture and
parameter names, so a kiln.nn model loads torchvision's state dict with
strict=True; test_models.py checks that against torchvision itself."""
import types

import torch

import kiln

TORCH = types.SimpleNamespace(nn=torch.nn, F=torch.nn.functional, T=torch, name="torch")
KILN = types.SimpleNamespace(nn=kiln.nn, F=kiln.nn.functional, T=kiln, name="kiln")


# --- torchvision: ResNet-18 --------------------------------------------------------------------


def resnet18(ns, num_classes=1000):
    nn, F, T = ns.nn, ns.F, ns.T

    class BasicBlock(nn.Module):
        def __init__(self, inplanes: int, planes: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                                nn.BatchNorm2d(planes))
            else:
                self.downsample = None

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            widths = [64, 128, 256, 512]
            inplanes = 64
            for i, planes in enumerate(widths):
                stride = 1 if i == 0 else 2
                setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(inplanes, planes, stride),
                                                             BasicBlock(planes, planes, 1)))
                inplanes = planes
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            x = T.flatten(self.avgpool(x), 1)
            return self.fc(x)

    return ResNet()


# --- torchvision: MobileNetV2 ------------------------------------------------------------------


def mobilenet_v2(ns, num_classes=1000):
    nn, F, T = ns.nn, ns.F, ns.T

    def conv_bn_relu6(inp, oup, kernel=3, stride=1, groups=1):
        return nn.Sequential(nn.Conv2d(inp, oup, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
                             nn.BatchNorm2d(oup), nn.ReLU6(inplace=True))

    class InvertedResidual(nn.Module):
        def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
            super().__init__()
            hidden = int(round(inp * expand_ratio))
            self.use_res_connect = stride == 1 and inp == oup
            layers = []
            if expand_ratio != 1:
                layers.append(conv_bn_relu6(inp, hidden, kernel=1))
            layers += [conv_bn_relu6(hidden, hidden, stride=stride, groups=hidden),
                       nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            if self.use_res_connect:
                return x + self.conv(x)
            return self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                        (6, 320, 1, 1)]
            features = [conv_bn_relu6(3, 32, stride=2)]
            inp = 32
            for t, c, n, s in settings:
                for i in range(n):
                    features.append(InvertedResidual(inp, c, s if i == 0 else 1, t))
                    inp = c
            features.append(conv_bn_relu6(inp, 1280, kernel=1))
            self.features = nn.Sequential(*features)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

        def forward(self, x):
            x = self.features(x)
            x = F.adaptive_avg_pool2d(x, (1, 1))
            return self.classifier(T.flatten(x, 1))

    return MobileNetV2()


# --- torchvision: SqueezeNet 1.0 ---------------------------------------------------------------


def squeezenet1_0(ns, num_classes=1000):
    nn, F, T = ns.nn, ns.F, ns.T

    class Fire(nn.Module):
        def __init__(self, inplanes: int, squeeze: int, expand1x1: int, expand3x3: int):
            super().__init__()
            self.squeeze = nn.Conv2d(inplanes, squeeze, 1)
            self.squeeze_activation = nn.ReLU(inplace=True)
            self.expand1x1 = nn.Conv2d(squeeze, expand1x1, 1)
            self.expand1x1_activation = nn.ReLU(inplace=True)
            self.expand3x3 = nn.Conv2d(squeeze, expand3x3, 3, padding=1)
            self.expand3x3_activation = nn.ReLU(inplace=True)

        def forward(self, x):
            x = self.squeeze_activation(self.squeeze(x))
            return T.cat([self.expand1x1_activation(self.expand1x1(x)),
                             self.expand3x3_activation(self.expand3x3(x))], 1)

    class SqueezeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, 7, stride=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                nn.MaxPool2d(3, 2, ceil_mode=True), Fire(512, 64, 256, 256))
            self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(512, num_classes, 1), nn.ReLU(inplace=True),
                                            nn.AdaptiveAvgPool2d((1, 1)))

        def forward(self, x):
            return T.flatten(self.classifier(self.features(x)), 1)

    return SqueezeNet()


# --- torchvision: ShuffleNetV2 x0.5 ------------------------------------------------------------


def shufflenet_v2_x0_5(ns, num_classes=1000):
    nn, F, T = ns.nn, ns.F, ns.T

    def channel_shuffle(x, groups: int):
        batch, channels, height, width = x.size()
        x = x.view(batch, groups, channels // groups, height, width)
        x = T.transpose(x, 1, 2).contiguous()
        return x.view(batch, -1, height, width)

    def depthwise(channels, stride):
        return nn.Conv2d(channels, channels, 3, stride, 1, bias=False, groups=channels)

    class InvertedResidual(nn.Module):
        def __init__(self, inp: int, oup: int, stride: int):
            super().__init__()
            self.stride = stride
            half = oup // 2
            if stride > 1:
                self.branch1 = nn.Sequential(depthwise(inp, stride), nn.BatchNorm2d(inp),
                                             nn.Conv2d(inp, half, 1, bias=False), nn.BatchNorm2d(half),
                                             nn.ReLU(inplace=True))
            else:
                self.branch1 = nn.Sequential()
            self.branch2 = nn.Sequential(
                nn.Conv2d(inp if stride > 1 else half, half, 1, bias=False), nn.BatchNorm2d(half),
                nn.ReLU(inplace=True), depthwise(half, stride), nn.BatchNorm2d(half),
                nn.Conv2d(half, half, 1, bias=False), nn.BatchNorm2d(half), nn.ReLU(inplace=True))

        def forward(self, x):
            if self.stride == 1:
                x1, x2 = x.chunk(2, dim=1)
                out = T.cat((x1, self.branch2(x2)), dim=1)
            else:
                out = T.cat((self.branch1(x), self.branch2(x)), dim=1)
            return channel_shuffle(out, 2)

    class ShuffleNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            channels = [24, 48, 96, 192, 1024]
            self.conv1 = nn.Sequential(nn.Conv2d(3, channels[0], 3, 2, 1, bias=False), nn.BatchNorm2d(channels[0]),
                                       nn.ReLU(inplace=True))
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            inp = channels[0]
            for name, repeats, oup in zip(["stage2", "stage3", "stage4"], [4, 8, 4], channels[1:4]):
                blocks = [InvertedResidual(inp, oup, 2)] + [InvertedResidual(oup, oup, 1) for _ in range(repeats - 1)]
                setattr(self, name, nn.Sequential(*blocks))
                inp = oup
            self.conv5 = nn.Sequential(nn.Conv2d(inp, channels[4], 1, 1, 0, bias=False), nn.BatchNorm2d(channels[4]),
                                       nn.ReLU(inplace=True))
            self.fc = nn.Linear(channels[4], num_classes)

        def forward(self, x):
            x = self.maxpool(self.conv1(x))
            x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
            return self.fc(x.mean([2, 3]))

    return ShuffleNetV2()


# --- sequence, audio and segmentation models ---------------------------------------------------


def transformer_encoder(ns, d_model=64, nhead=4, layers=2):
    nn, F, T = ns.nn, ns.F, ns.T

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2 * d_model, dropout=0.1,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d_model, 10)

        def forward(self, x):
            return self.head(self.encoder(x))

    return Encoder()


def recurrent_lm(ns, kind="LSTM", vocab=500, embed=64, hidden=128, layers=2):
    nn, F, T = ns.nn, ns.F, ns.T

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, embed)
            self.rnn = getattr(nn, kind)(embed, hidden, num_layers=layers, batch_first=True, dropout=0.2)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            output, _ = self.rnn(self.embedding(tokens))
            return self.decoder(output)

    return LanguageModel()


def audio_conv1d(ns, classes=12):
    """A small keyword-spotting network over raw audio (M5-like)."""
    nn, F, T = ns.nn, ns.F, ns.T

    class Audio(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(1, 32, kernel_size=80, stride=16)
            self.bn1 = nn.BatchNorm1d(32)
            self.pool1 = nn.MaxPool1d(4)
            self.conv2 = nn.Conv1d(32, 32, kernel_size=3)
            self.bn2 = nn.BatchNorm1d(32)
            self.pool2 = nn.MaxPool1d(4)
            self.conv3 = nn.Conv1d(32, 64, kernel_size=3, padding=1)
            self.bn3 = nn.BatchNorm1d(64)
            self.fc = nn.Linear(64, classes)

        def forward(self, x):
            x = self.pool1(F.relu(self.bn1(self.conv1(x))))
            x = self.pool2(F.relu(self.bn2(self.conv2(x))))
            x = F.relu(self.bn3(self.conv3(x)))
            x = F.adaptive_avg_pool1d(x, 1)
            return F.log_softmax(self.fc(x.permute(0, 2, 1)), dim=2)

    return Audio()


def small_unet(ns, channels=3, classes=2, base=16):
    nn, F, T = ns.nn, ns.F, ns.T

    def double_conv(inp, out):
        return nn.Sequential(nn.Conv2d(inp, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(inplace=True),
                             nn.Conv2d(out, out, 3, padding=1, bias=False), nn.BatchNorm2d(out),
                             nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inc = double_conv(channels, base)
            self.down1 = nn.Sequential(nn.MaxPool2d(2), double_conv(base, 2 * base))
            self.down2 = nn.Sequential(nn.MaxPool2d(2), double_conv(2 * base, 4 * base))
            self.up1 = nn.Upsample(scale_factor=2.0, mode="bilinear", align_corners=True)
            self.conv_up1 = double_conv(6 * base, 2 * base)
            self.up2 = nn.ConvTranspose2d(2 * base, base, kernel_size=2, stride=2)
            self.conv_up2 = double_conv(2 * base, base)
            self.outc = nn.Conv2d(base, classes, 1)

        def forward(self, x):
            x1 = self.inc(x)
            x2 = self.down1(x1)
            x3 = self.down2(x2)
            y = self.conv_up1(T.cat([x2, self.up1(x3)], 1))
            y = self.conv_up2(T.cat([x1, self.up2(y)], 1))
            return self.outc(y)

    return UNet()


def to_kiln_state(state_dict):
    """A torch state dict as kiln tensors (what kiln.load_pickle gives for the same file)."""
    return {k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in state_dict.items()}
