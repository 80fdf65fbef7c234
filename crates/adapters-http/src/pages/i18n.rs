//! The pages' strings, every one in each language; the languages themselves and their choice
//! from `Accept-Language` are `web_edge::lang`'s.

use domain::operation::DeclineCode;

pub use web_edge::lang::{negotiate, Lang};

/// Every string of the pages in a language: `lang.texts()`.
pub trait PageTexts {
    /// Every string of the pages in this language.
    fn texts(self) -> &'static Texts;
}

impl PageTexts for Lang {
    fn texts(self) -> &'static Texts {
        match self {
            Lang::En => &EN,
            Lang::Ru => &RU,
        }
    }
}

/// Every string the pages show, one table per language.
pub struct Texts {
    pub lang: &'static str,
    pub amount: &'static str,
    pub reference: &'static str,
    pub test_mode: &'static str,
    pub card_title: &'static str,
    pub card_number: &'static str,
    pub card_expiry: &'static str,
    pub card_cvc: &'static str,
    pub pay: &'static str,
    pub card_note: &'static str,
    pub card_errors: &'static str,
    pub bad_pan: &'static str,
    pub bad_expiry: &'static str,
    pub bad_cvc: &'static str,
    pub sbp_title: &'static str,
    pub choose_bank: &'static str,
    pub unknown_bank: &'static str,
    pub other_bank: &'static str,
    pub bank_prompt: &'static str,
    pub confirm: &'static str,
    pub reject: &'static str,
    pub qr_title: &'static str,
    pub qr_hint: &'static str,
    pub bank_app: &'static str,
    pub approved_title: &'static str,
    pub declined_title: &'static str,
    pub expired_title: &'static str,
    pub expired_hint: &'static str,
    pub reason: &'static str,
    pub already_finished: &'static str,
    pub processing_title: &'static str,
    pub elsewhere: &'static str,
    pub back_to_store: &'static str,
    pub back_to_payment: &'static str,
    pub not_found_title: &'static str,
    pub not_found_hint: &'static str,
    pub bad_request_title: &'static str,
    pub bad_request_hint: &'static str,
    pub unavailable_title: &'static str,
    pub unavailable_hint: &'static str,
    pub too_many_title: &'static str,
    pub too_many_hint: &'static str,
    pub internal_title: &'static str,
    pub internal_hint: &'static str,
    pub processing_hint: &'static str,
    declines: [&'static str; DeclineCode::ALL.len()],
}

impl Texts {
    /// Why a payment was declined, for the payer.
    pub fn decline(&self, code: DeclineCode) -> &'static str {
        // In the order of `DeclineCode::ALL`; a code from a later version: the payer sees the
        // general decline (the first, `ProviderDeclined`'s).
        let index = DeclineCode::ALL.iter().position(|known| *known == code);
        self.declines[index.unwrap_or(0)]
    }
}

const EN: Texts = Texts {
    lang: "en",
    amount: "Amount",
    reference: "Payment",
    test_mode: "Test mode: no real money moves.",
    card_title: "Pay by card",
    card_number: "Card number",
    card_expiry: "Expiry (MM/YY)",
    card_cvc: "CVC",
    pay: "Pay",
    card_note: "The card details go to the bank only; they are not kept.",
    card_errors: "Please check the card details.",
    bad_pan: "Enter a valid card number.",
    bad_expiry: "Enter a future expiry date as MM/YY.",
    bad_cvc: "Enter the 3 or 4 digit code from the back of the card.",
    sbp_title: "Pay by SBP",
    choose_bank: "Choose your bank",
    unknown_bank: "Choose a bank from the list.",
    other_bank: "Choose another bank",
    bank_prompt: "Confirm this payment?",
    confirm: "Confirm",
    reject: "Reject",
    qr_title: "Scan the QR code",
    qr_hint: "Open your bank app and scan this code to pay.",
    bank_app: "Bank app",
    approved_title: "Payment successful",
    declined_title: "Payment declined",
    expired_title: "Time to pay has run out",
    expired_hint: "Return to the store and start a new payment.",
    reason: "Reason",
    already_finished: "This payment is already finished; nothing was changed.",
    processing_title: "Payment in progress",
    elsewhere: "This payment is not made on this page.",
    processing_hint: "We are waiting for the bank. This page refreshes by itself.",
    back_to_store: "Return to the store",
    back_to_payment: "Back to the payment",
    not_found_title: "Payment not found",
    not_found_hint: "Check the link, or start a new payment at the store.",
    bad_request_title: "The form could not be read",
    bad_request_hint: "Go back and send the form again.",
    unavailable_title: "Temporarily unavailable",
    unavailable_hint: "Nothing was changed. Please try again in a minute.",
    too_many_title: "Too many requests",
    too_many_hint: "This page was asked for too often. Please wait a moment and reload it.",
    internal_title: "Something went wrong",
    internal_hint: "Please try again later. Error reference:",
    declines: [
        "The bank declined the payment.",
        "The card was declined.",
        "The card has insufficient funds.",
        "The payment was rejected.",
        "The time to pay ran out.",
        "Too many wrong confirmation codes.",
        "The recipient was not found.",
        "The bank is not available right now.",
        "The payment was canceled.",
    ],
};

const RU: Texts = Texts {
    lang: "ru",
    amount: "Сумма",
    reference: "Платёж",
    test_mode: "Тестовый режим: реальные деньги не списываются.",
    card_title: "Оплата картой",
    card_number: "Номер карты",
    card_expiry: "Срок действия (ММ/ГГ)",
    card_cvc: "CVC/CVV",
    pay: "Оплатить",
    card_note: "Данные карты передаются только банку и не сохраняются.",
    card_errors: "Проверьте данные карты.",
    bad_pan: "Введите правильный номер карты.",
    bad_expiry: "Введите срок действия в формате ММ/ГГ (не в прошлом).",
    bad_cvc: "Введите код из 3 или 4 цифр с обратной стороны карты.",
    sbp_title: "Оплата через СБП",
    choose_bank: "Выберите банк",
    unknown_bank: "Выберите банк из списка.",
    other_bank: "Выбрать другой банк",
    bank_prompt: "Подтвердить платёж?",
    confirm: "Подтвердить",
    reject: "Отклонить",
    qr_title: "Отсканируйте QR-код",
    qr_hint: "Откройте приложение банка и отсканируйте код, чтобы оплатить.",
    bank_app: "Приложение банка",
    approved_title: "Оплата прошла успешно",
    declined_title: "Платёж отклонён",
    expired_title: "Время на оплату истекло",
    expired_hint: "Вернитесь в магазин и создайте новый платёж.",
    reason: "Причина",
    already_finished: "Этот платёж уже завершён; ничего не изменено.",
    processing_title: "Платёж обрабатывается",
    elsewhere: "Этот платёж выполняется не на этой странице.",
    processing_hint: "Ждём ответа банка. Страница обновится сама.",
    back_to_store: "Вернуться в магазин",
    back_to_payment: "Вернуться к оплате",
    not_found_title: "Платёж не найден",
    not_found_hint: "Проверьте ссылку или создайте новый платёж в магазине.",
    bad_request_title: "Не удалось прочитать форму",
    bad_request_hint: "Вернитесь назад и отправьте форму ещё раз.",
    unavailable_title: "Сервис временно недоступен",
    unavailable_hint: "Ничего не изменено. Попробуйте ещё раз через минуту.",
    too_many_title: "Слишком много запросов",
    too_many_hint: "Эту страницу запрашивали слишком часто. Подождите немного и обновите её.",
    internal_title: "Что-то пошло не так",
    internal_hint: "Попробуйте позже. Код ошибки:",
    declines: [
        "Банк отклонил платёж.",
        "Карта отклонена.",
        "На карте недостаточно средств.",
        "Платёж отклонён.",
        "Время на оплату истекло.",
        "Слишком много неверных кодов подтверждения.",
        "Получатель не найден.",
        "Банк сейчас недоступен.",
        "Платёж отменён.",
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decline_has_a_text_in_both_languages() {
        for code in DeclineCode::ALL {
            assert_ne!(EN.decline(code), RU.decline(code), "{code:?}");
            assert!(!EN.decline(code).is_empty());
        }
        assert_eq!(Lang::Ru.texts().lang, "ru");
        assert_eq!(Lang::En.texts().lang, "en");
    }
}
