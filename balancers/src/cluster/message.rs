//! What ranks say to each other, and how it travels: a tag and a list of 32-bit words.

/// One message between two ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Asks for tiles: a steal (the victim answers with half of what it holds) or, sent to rank
    /// 0 under `counter`, the counter's next chunk.
    Request,
    /// Tiles handed over, by index: a steal's loot or a counter's chunk. Never empty.
    Tiles(Vec<u32>),
    /// The answer to a request when there is nothing to hand over.
    NoTiles,
    /// To rank 0 under `stealing`: the sender has finished this many more tiles.
    Finished(u64),
    /// From rank 0 under `stealing`: every tile of the frame is finished.
    AllDone,
}

impl Message {
    /// The message's kind as a small number (an MPI tag) and its words.
    pub fn encode(&self) -> (u16, Vec<u32>) {
        match self {
            Self::Request => (0, Vec::new()),
            Self::Tiles(tiles) => (1, tiles.clone()),
            Self::NoTiles => (2, Vec::new()),
            Self::Finished(n) => (3, vec![*n as u32, (*n >> 32) as u32]),
            Self::AllDone => (4, Vec::new()),
        }
    }

    /// The message [`encode`](Self::encode) made of `tag` and `words`, or `None` when they are
    /// not one (an unknown tag, or words that do not fit it).
    pub fn decode(tag: u16, words: Vec<u32>) -> Option<Self> {
        Some(match (tag, words.len()) {
            (0, 0) => Self::Request,
            (1, n) if n > 0 => Self::Tiles(words),
            (2, 0) => Self::NoTiles,
            (3, 2) => Self::Finished(u64::from(words[0]) | (u64::from(words[1]) << 32)),
            (4, 0) => Self::AllDone,
            _ => return None,
        })
    }

    /// Bytes of payload on the wire (the words; the transport's own envelope aside).
    pub fn bytes(&self) -> u64 {
        match self {
            Self::Tiles(tiles) => 4 * tiles.len() as u64,
            Self::Finished(_) => 8,
            Self::Request | Self::NoTiles | Self::AllDone => 0,
        }
    }

    /// The highest tag [`encode`](Self::encode) gives.
    pub const LAST_TAG: u16 = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_survives_the_wire() {
        let all = [
            Message::Request,
            Message::Tiles(vec![7, 0, u32::MAX]),
            Message::NoTiles,
            Message::Finished(u64::MAX - 5),
            Message::AllDone,
        ];
        for message in all {
            let (tag, words) = message.encode();
            assert!(tag <= Message::LAST_TAG);
            assert_eq!(4 * words.len() as u64, message.bytes());
            assert_eq!(Message::decode(tag, words), Some(message));
        }
        assert_eq!(
            Message::decode(1, Vec::new()),
            None,
            "tiles are never empty"
        );
        assert_eq!(Message::decode(0, vec![1]), None);
        assert_eq!(Message::decode(9, Vec::new()), None);
    }
}
