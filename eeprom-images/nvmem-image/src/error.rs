//! Typed errors: every one names the file and the field or byte offset.

use std::fmt;

/// A problem found while decoding an image, at a byte offset where one applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: Option<usize>,
    pub msg: String,
}

impl DecodeError {
    pub fn at(offset: usize, msg: impl Into<String>) -> Self {
        Self {
            offset: Some(offset),
            msg: msg.into(),
        }
    }
    pub fn whole(msg: impl Into<String>) -> Self {
        Self {
            offset: None,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "byte {o:#x}: {}", self.msg),
            None => f.write_str(&self.msg),
        }
    }
}

/// A problem in a description, in a named field where one applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescError {
    pub field: Option<String>,
    pub msg: String,
}

impl DescError {
    pub fn field(field: impl Into<String>, msg: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            msg: msg.into(),
        }
    }
    pub fn whole(msg: impl Into<String>) -> Self {
        Self {
            field: None,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for DescError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(name) => write!(f, "field `{name}`: {}", self.msg),
            None => f.write_str(&self.msg),
        }
    }
}

/// Every error the tool reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {err}")]
    Desc { path: String, err: DescError },
    #[error("{path}: {err}")]
    Image { path: String, err: DecodeError },
    #[error("{path}: {tool}: {msg}")]
    Tool {
        path: String,
        tool: String,
        msg: String,
    },
    #[error("{0}")]
    Usage(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
