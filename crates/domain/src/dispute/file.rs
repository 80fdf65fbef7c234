//! A file sent with a dispute (an appeal's receipt, a chargeback's evidence): at most 2 MiB,
//! of a declared type that its first bytes must show.

use crate::names::names;

names! {
    /// The file types a dispute accepts, by their media type.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum FileType {
        Pdf = "application/pdf",
        Png = "image/png",
        Jpeg = "image/jpeg",
    }
    else "must be application/pdf, image/png or image/jpeg"
}

impl FileType {
    /// The file name extension of the type, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            FileType::Pdf => "pdf",
            FileType::Png => "png",
            FileType::Jpeg => "jpg",
        }
    }

    /// The bytes every file of the type begins with.
    fn magic(self) -> &'static [u8] {
        match self {
            FileType::Pdf => b"%PDF-",
            FileType::Png => b"\x89PNG\r\n\x1a\n",
            FileType::Jpeg => b"\xFF\xD8\xFF",
        }
    }
}

/// Why a file was refused, and which of its fields is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileRule {
    #[error("must be 1 to 255 characters without control characters or path separators")]
    Name,
    #[error("must not be empty")]
    Empty,
    #[error("must be at most 2 MiB once decoded")]
    TooLarge,
    #[error("is not a file of its contentType")]
    NotItsType,
}

impl FileRule {
    /// The field of the file the rule is about.
    pub fn field(self) -> &'static str {
        match self {
            FileRule::Name => "fileName",
            FileRule::Empty | FileRule::TooLarge | FileRule::NotItsType => "data",
        }
    }
}

/// A checked file.
#[derive(Clone, PartialEq, Eq)]
pub struct DisputeFile {
    pub file_name: String,
    pub content_type: FileType,
    pub data: Vec<u8>,
}

impl std::fmt::Debug for DisputeFile {
    /// The name, type and size: never the contents.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisputeFile")
            .field("file_name", &self.file_name)
            .field("content_type", &self.content_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

impl DisputeFile {
    /// The largest file, decoded.
    pub const MAX_BYTES: usize = 2 * 1024 * 1024;

    /// A file of `content_type` named `file_name`, if its bytes are of that type (by their
    /// first bytes, whatever the name says) and it is not too large.
    pub fn new(
        file_name: &str,
        content_type: FileType,
        data: Vec<u8>,
    ) -> Result<DisputeFile, FileRule> {
        let name_ok = (1..=255).contains(&file_name.chars().count())
            && !file_name
                .chars()
                .any(|c| c.is_control() || c == '/' || c == '\\');
        if !name_ok {
            return Err(FileRule::Name);
        }
        if data.is_empty() {
            return Err(FileRule::Empty);
        }
        if data.len() > Self::MAX_BYTES {
            return Err(FileRule::TooLarge);
        }
        if !data.starts_with(content_type.magic()) {
            return Err(FileRule::NotItsType);
        }
        Ok(DisputeFile {
            file_name: file_name.to_string(),
            content_type,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn a_file_is_of_the_type_its_first_bytes_show() {
        assert!(DisputeFile::new("receipt.png", FileType::Png, PNG.to_vec()).is_ok());
        assert!(DisputeFile::new("r.pdf", FileType::Pdf, b"%PDF-1.7\n".to_vec()).is_ok());
        assert!(DisputeFile::new("r.jpg", FileType::Jpeg, b"\xFF\xD8\xFF\xE0..".to_vec()).is_ok());
        let renamed_text = b"just some text, renamed to .png".to_vec();
        assert_eq!(
            DisputeFile::new("receipt.png", FileType::Png, renamed_text),
            Err(FileRule::NotItsType)
        );
        assert_eq!(
            DisputeFile::new("receipt.pdf", FileType::Pdf, PNG.to_vec()),
            Err(FileRule::NotItsType)
        );
    }

    #[test]
    fn a_file_is_at_most_two_mebibytes_and_not_empty() {
        let mut big = PNG.to_vec();
        big.resize(DisputeFile::MAX_BYTES, 0);
        assert!(DisputeFile::new("big.png", FileType::Png, big.clone()).is_ok());
        big.push(0);
        assert_eq!(
            DisputeFile::new("big.png", FileType::Png, big),
            Err(FileRule::TooLarge)
        );
        assert_eq!(
            DisputeFile::new("e.png", FileType::Png, Vec::new()),
            Err(FileRule::Empty)
        );
    }

    #[test]
    fn a_name_is_short_and_names_no_path() {
        for bad in ["", "../etc/passwd", "a\\b.png", "a\nb.png"] {
            assert_eq!(
                DisputeFile::new(bad, FileType::Png, PNG.to_vec()),
                Err(FileRule::Name),
                "{bad:?}"
            );
        }
        assert_eq!(FileRule::Name.field(), "fileName");
        assert_eq!(FileRule::NotItsType.field(), "data");
    }

    #[test]
    fn its_debug_form_shows_no_contents() {
        let file = DisputeFile::new("receipt.png", FileType::Png, PNG.to_vec())
            .unwrap_or_else(|_| unreachable!());
        assert!(!format!("{file:?}").contains("IHDR"));
    }
}
