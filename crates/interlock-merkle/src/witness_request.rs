//! The body of a C2SP tlog-witness `add-checkpoint` request
//! (<https://c2sp.org/tlog-witness>): the size the witness last cosigned, a
//! consistency proof from it, and the new signed checkpoint.
//!
//! ```text
//! old <size>\n
//! <base64 hash>\n          (0 to 63 lines)
//! \n
//! <signed checkpoint note>
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;

use crate::hash::Hash;

/// At most this many consistency proof lines (the spec's limit).
pub const MAX_PROOF_LINES: usize = 63;

/// Why an `add-checkpoint` body was refused (the witness answers 400).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddCheckpointError {
    /// The first line is not `old <decimal>`.
    #[error("the first line is not \"old <size>\" in decimal without leading zeroes")]
    OldSize,
    /// A proof line is not a base64 32-byte hash.
    #[error("consistency proof line {0} is not a base64 SHA-256 hash")]
    ProofLine(usize),
    /// More than [`MAX_PROOF_LINES`] proof lines.
    #[error("more than {MAX_PROOF_LINES} consistency proof lines")]
    TooManyProofLines,
    /// No empty line before the checkpoint.
    #[error("no empty line between the proof and the checkpoint")]
    NoCheckpoint,
}

/// A parsed `add-checkpoint` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddCheckpoint {
    /// The size of the checkpoint the witness last cosigned for this log (0 if none).
    pub old_size: u64,
    /// Consistency proof from `old_size` to the checkpoint's size.
    pub proof: Vec<Hash>,
    /// The signed checkpoint note, as sent (parsed and verified by the witness).
    pub checkpoint: String,
}

impl AddCheckpoint {
    /// The request body.
    pub fn to_body(&self) -> String {
        let mut s = format!("old {}\n", self.old_size);
        for h in &self.proof {
            s.push_str(&B64.encode(h));
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.checkpoint);
        s
    }

    /// Parses a request body strictly.
    pub fn parse(body: &str) -> Result<Self, AddCheckpointError> {
        let (first, mut rest) = body.split_once('\n').ok_or(AddCheckpointError::OldSize)?;
        let digits = first
            .strip_prefix("old ")
            .ok_or(AddCheckpointError::OldSize)?;
        if digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return Err(AddCheckpointError::OldSize);
        }
        let old_size = digits.parse().map_err(|_| AddCheckpointError::OldSize)?;
        let mut proof = Vec::new();
        loop {
            let (line, after) = rest
                .split_once('\n')
                .ok_or(AddCheckpointError::NoCheckpoint)?;
            rest = after;
            if line.is_empty() {
                break;
            }
            if proof.len() == MAX_PROOF_LINES {
                return Err(AddCheckpointError::TooManyProofLines);
            }
            let raw = B64
                .decode(line)
                .map_err(|_| AddCheckpointError::ProofLine(proof.len() + 1))?;
            let hash = Hash::try_from(raw.as_slice())
                .map_err(|_| AddCheckpointError::ProofLine(proof.len() + 1))?;
            proof.push(hash);
        }
        Ok(Self {
            old_size,
            proof,
            checkpoint: rest.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_the_spec_example_parses() {
        let body = "old 20852014\n\
            PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\
            jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n\
            \n\
            example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n\
            \u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n";
        let req = AddCheckpoint::parse(body).unwrap();
        assert_eq!(req.old_size, 20852014);
        assert_eq!(req.proof.len(), 2);
        assert!(
            req.checkpoint
                .starts_with("example.com/behind-the-sofa\n20852163\n")
        );
        assert_eq!(req.to_body(), body);
    }

    #[test]
    fn malformed_requests_are_named() {
        for (body, want) in [
            ("old 01\n\ncp\n", AddCheckpointError::OldSize),
            ("old -1\n\ncp\n", AddCheckpointError::OldSize),
            ("new 1\n\ncp\n", AddCheckpointError::OldSize),
            (
                "old 1\nnot base64!\n\ncp\n",
                AddCheckpointError::ProofLine(1),
            ),
            ("old 1\nAAAA\n\ncp\n", AddCheckpointError::ProofLine(1)),
            ("old 1\n", AddCheckpointError::NoCheckpoint),
        ] {
            assert_eq!(AddCheckpoint::parse(body), Err(want), "{body:?}");
        }
        let line = format!("{}\n", B64.encode([7u8; 32]));
        let body = format!("old 1\n{}\ncp\n", line.repeat(64));
        assert_eq!(
            AddCheckpoint::parse(&body),
            Err(AddCheckpointError::TooManyProofLines)
        );
        let body = format!("old 0\n{}\ncp\n", line.repeat(63));
        assert_eq!(AddCheckpoint::parse(&body).unwrap().proof.len(), 63);
    }
}
