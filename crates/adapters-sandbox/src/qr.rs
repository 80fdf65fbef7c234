//! QR codes as small PNG data URIs.

use std::io::Cursor;

use base64::Engine as _;
use image::{ImageFormat, Luma};
use qrcode::QrCode;

/// Pixels per QR module: small images that phone cameras still read easily.
const MODULE_PX: u32 = 4;

/// Why a QR code could not be made.
#[derive(Debug, thiserror::Error)]
pub enum QrError {
    /// The text does not fit in a QR code.
    #[error("cannot encode the text as a QR code: {0}")]
    Encode(#[from] qrcode::types::QrError),
    /// The image could not be written as PNG.
    #[error("cannot write the QR code as PNG: {0}")]
    Png(#[from] image::ImageError),
}

/// The PNG bytes of a QR code (with its quiet zone) whose text is `text`.
pub fn qr_png(text: &str) -> Result<Vec<u8>, QrError> {
    let code = QrCode::new(text.as_bytes())?;
    let image = code
        .render::<Luma<u8>>()
        .module_dimensions(MODULE_PX, MODULE_PX)
        .quiet_zone(true)
        .build();
    let mut png = Vec::new();
    image.write_to(&mut Cursor::new(&mut png), ImageFormat::Png)?;
    Ok(png)
}

/// A QR code whose text is `text`, as `data:image/png;base64,...`.
pub fn qr_png_data_uri(text: &str) -> Result<String, QrError> {
    let png = qr_png(text)?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(png);
    Ok(format!("data:image/png;base64,{encoded}"))
}

/// The QR codes every page shows (PNG data URIs), for the domain's `QrEncoder` port.
#[derive(Debug, Clone, Copy, Default)]
pub struct PngQr;

impl domain::ports::QrEncoder for PngQr {
    fn data_uri(&self, text: &str) -> Result<String, domain::ports::BoxError> {
        Ok(qr_png_data_uri(text)?)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Decodes a `data:image/png;base64,...` QR code and returns the text of every code found.
    pub(crate) fn decode_data_uri(uri: &str) -> Vec<String> {
        let encoded = uri
            .strip_prefix("data:image/png;base64,")
            .expect("a PNG data URI");
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("valid base64");
        let image = image::load_from_memory_with_format(&png, ImageFormat::Png)
            .expect("a valid PNG")
            .to_luma8();
        let (width, height) = image.dimensions();
        let mut prepared =
            rqrr::PreparedImage::prepare_from_greyscale(width as usize, height as usize, |x, y| {
                image.get_pixel(x as u32, y as u32).0[0]
            });
        prepared
            .detect_grids()
            .iter()
            .map(|grid| grid.decode().expect("a readable QR code").1)
            .collect()
    }

    #[test]
    fn data_uri_holds_a_real_qr_code_with_the_text() {
        let text = "http://127.0.0.1:8080/sandbox/qr/6f9619ff-8b86-d011-b42d-00cf4fc964ff";
        let uri = qr_png_data_uri(text).expect("encodable");
        assert_eq!(decode_data_uri(&uri), vec![text.to_string()]);
    }

    #[test]
    fn images_stay_small() {
        let text = format!("https://gateway.example.com/sandbox/qr/{}", "f".repeat(36));
        let png = qr_png(&text).expect("encodable");
        assert!(png.len() < 4_000, "{} bytes", png.len());
        let image = image::load_from_memory(&png).expect("valid PNG");
        assert!(image.width() <= 300, "{} px", image.width());
    }

    #[test]
    fn text_too_long_for_a_qr_code_is_an_error() {
        let err = qr_png_data_uri(&"x".repeat(8_000)).expect_err("too long");
        assert!(matches!(err, QrError::Encode(_)));
    }
}
