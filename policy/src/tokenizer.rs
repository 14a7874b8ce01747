//! Word-level tokenizer with a vocabulary built from the skills' instructions, saved with the
//! checkpoint. Lower-cased alphanumeric words; id 0 is padding, id 1 an unknown word.

use serde::{Deserialize, Serialize};

pub const PAD_ID: i64 = 0;
pub const UNK_ID: i64 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tokenizer {
    /// Words in id order starting at id 2.
    pub words: Vec<String>,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Tokenizer {
    /// Vocabulary of every word in `instructions`, sorted (so the same set gives the same ids).
    pub fn build<'a>(instructions: impl IntoIterator<Item = &'a str>) -> Tokenizer {
        let mut all: Vec<String> = instructions.into_iter().flat_map(words).collect();
        all.sort();
        all.dedup();
        Tokenizer { words: all }
    }

    pub fn vocab_size(&self) -> i64 {
        self.words.len() as i64 + 2
    }

    /// Token ids of `text`, cut or padded (with `PAD_ID`) to `len`.
    pub fn encode(&self, text: &str, len: usize) -> Vec<i64> {
        let mut ids: Vec<i64> = words(text)
            .map(|w| match self.words.binary_search(&w) {
                Ok(i) => i as i64 + 2,
                Err(_) => UNK_ID,
            })
            .take(len)
            .collect();
        ids.resize(len, PAD_ID);
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_known_unknown_and_pads() {
        let t = Tokenizer::build(["Lift the red cube", "reach the target"]);
        assert_eq!(t.words, ["cube", "lift", "reach", "red", "target", "the"]);
        assert_eq!(
            t.encode("lift the BLUE cube", 6),
            vec![3, 7, UNK_ID, 2, 0, 0]
        );
        assert_eq!(t.encode("reach the target now", 2), vec![4, 7]);
    }
}
