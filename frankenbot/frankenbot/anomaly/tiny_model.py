"""A tiny causal LM built from a config, for tests and quick benchmarks (no downloads, no hub).

Real transformers classes (a 2-layer Gemma 3 text model with random weights) and a real
``PreTrainedTokenizerFast`` over a word-level vocabulary built from sample text, so the local
expert's whole path (tokenise, shared-prefix KV cache, batched scoring) runs exactly as with the
packaged Gemma, in milliseconds. Its rankings are meaningless by design; tests check plumbing and
determinism, never that a random model is right.
"""

from __future__ import annotations

from typing import Any, Iterable

from frankenbot.anomaly.local_expert import TURN_END, TURN_MODEL, TURN_USER, Loader

SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>", TURN_USER.strip(), TURN_MODEL.strip(),
            TURN_END.strip()]
BASE_TEXT = (
    "a robot arm hit problem while doing task choose the best repair from options task step "
    "holding nothing visible labels already tried try again look for then pick up open gripper "
    "wait moment things to settle go back and redo steps there skip continue with rest ask "
    "planner new plan changed scene give stop grasp lost object moved missing target occupied "
    "motion rejected aborted stall stale timeout place failed fixture stuck red green blue "
    "yellow block bowl drawer bin plate zone obj container"
)


def build_tiny_loader(extra_text: Iterable[str] = (), *, layers: int = 2, hidden: int = 32,
                      seed: int = 0) -> Loader:
    """A loader returning (model, tokenizer) for a random tiny Gemma 3 text model."""

    def load() -> tuple[Any, Any]:
        import torch
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
        from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

        raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
        raw.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace()])
        trainer = trainers.WordLevelTrainer(special_tokens=SPECIALS)
        raw.train_from_iterator([BASE_TEXT, *extra_text], trainer)
        tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", pad_token="<pad>",
                                      bos_token="<bos>", eos_token="<eos>",
                                      additional_special_tokens=SPECIALS[4:])
        config = Gemma3TextConfig(
            vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden,
            num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
            head_dim=hidden // 2, max_position_embeddings=2048, sliding_window=512,
            pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id)
        torch.manual_seed(seed)
        model = Gemma3ForCausalLM(config)
        return model, tok

    return load
