//! The flash messages an action's redirect names by a code, in English and Russian.

use web_edge::Lang;

/// The flash message of a code an action's redirect carries: (code, English, Russian).
const FLASHES: [(&str, &str, &str); 34] = [
    (
        "ledger_holds",
        "The ledger check found no mismatch.",
        "Проверка проводок расхождений не нашла.",
    ),
    (
        "ledger_mismatch",
        "The ledger check found mismatches: balances differ from their ledger entries.",
        "Проверка проводок нашла расхождения: балансы не сходятся с проводками.",
    ),
    (
        "callback_retried",
        "The callback is queued again and will be sent at once.",
        "Колбэк снова поставлен в очередь и будет отправлен сразу.",
    ),
    (
        "callback_sent",
        "The callback is due now.",
        "Колбэк будет отправлен сейчас.",
    ),
    (
        "no_failed_callback",
        "There is no failed callback to retry (it may have been retried already).",
        "Нет недоставленного колбэка для повтора (возможно, его уже повторили).",
    ),
    (
        "callback_held",
        "The callback is held: its merchant is disabled. Enabling the merchant sends it.",
        "Колбэк удержан: мерчант выключен. Колбэк уйдёт, когда мерчанта включат.",
    ),
    (
        "no_pending_callback",
        "There is no pending callback to send.",
        "Нет колбэка в очереди для отправки.",
    ),
    (
        "canceled",
        "The provider canceled the operation.",
        "Провайдер отменил операцию.",
    ),
    (
        "already_final",
        "The operation is already final; nothing was changed.",
        "Операция уже завершена; ничего не изменено.",
    ),
    (
        "not_at_acquirer",
        "Only operations at an acquirer are canceled at their provider.",
        "Отменить у провайдера можно только операции эквайера.",
    ),
    (
        "provider_unavailable",
        "The acquirer's answer is not known; nothing was changed. Try again.",
        "Ответ эквайера неизвестен; ничего не изменено. Попробуйте ещё раз.",
    ),
    (
        "sandbox_off",
        "The sandbox is not in service.",
        "Песочница выключена.",
    ),
    (
        "not_sandbox",
        "Only the sandbox's operations are completed here.",
        "Здесь завершаются только операции песочницы.",
    ),
    (
        "completed",
        "The sandbox completed the operation.",
        "Песочница завершила операцию.",
    ),
    (
        "merchant_enabled",
        "The merchant is enabled: its held callbacks go out on their schedule.",
        "Мерчант включён: его удержанные колбэки уйдут по расписанию.",
    ),
    (
        "merchant_disabled",
        "The merchant is disabled: its requests are refused.",
        "Мерчант выключен: его запросы отклоняются.",
    ),
    (
        "balance_changed",
        "The balance is changed and the ledger entry written.",
        "Баланс изменён, проводка записана.",
    ),
    (
        "insufficient_balance",
        "Refused: the available balance is lower than the debit.",
        "Отказано: доступный баланс меньше суммы списания.",
    ),
    (
        "unknown_operation",
        "Refused: there is no operation with this operationId.",
        "Отказано: операции с таким operationId нет.",
    ),
    (
        "not_the_operations",
        "Refused: the operation belongs to another merchant or is in another currency.",
        "Отказано: операция другого мерчанта или в другой валюте.",
    ),
    (
        "discrepancy_resolved",
        "The discrepancy is marked resolved.",
        "Расхождение отмечено урегулированным.",
    ),
    (
        "already_resolved",
        "The discrepancy was already resolved; nothing was changed.",
        "Расхождение уже урегулировано; ничего не изменено.",
    ),
    ("route_enabled", "The route is enabled.", "Маршрут включён."),
    (
        "route_disabled",
        "The route is disabled.",
        "Маршрут выключен.",
    ),
    (
        "route_priority",
        "The route's priority is set.",
        "Приоритет маршрута задан.",
    ),
    (
        "provider_enabled",
        "The provider is enabled.",
        "Провайдер включён.",
    ),
    (
        "provider_disabled",
        "The provider is disabled.",
        "Провайдер выключен.",
    ),
    (
        "dispute_decided",
        "The appeal is decided; its callback is queued.",
        "Решение по апелляции принято; колбэк поставлен в очередь.",
    ),
    (
        "dispute_not_open",
        "The dispute is not an open appeal (it may have been decided already); nothing was changed.",
        "Спор не является открытой апелляцией (возможно, решение уже принято); ничего не изменено.",
    ),
    (
        "dispute_amount_too_small",
        "The deposit's fee on this amount would be at least the amount; nothing was changed.",
        "Комиссия депозита с этой суммы была бы не меньше самой суммы; ничего не изменено.",
    ),
    (
        "dispute_insufficient_balance",
        "The merchant's available balance cannot cover the correction; nothing was changed.",
        "Доступного баланса мерчанта не хватает на корректировку; ничего не изменено.",
    ),
    (
        "tariff_set",
        "The tariff is set: new operations pay by it.",
        "Тариф задан: новые операции оплачиваются по нему.",
    ),
    (
        "tariff_removed",
        "The tariff is removed: new operations pay no fee by it.",
        "Тариф удалён: новые операции не платят по нему комиссию.",
    ),
    (
        "no_such_tariff",
        "There is no such tariff (it may have been removed already); nothing was changed.",
        "Такого тарифа нет (возможно, его уже удалили); ничего не изменено.",
    ),
];

/// The text of a flash code in `lang`; `None` for an unknown code.
pub(crate) fn flash_text(lang: Lang, code: &str) -> Option<&'static str> {
    FLASHES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, en, ru)| match lang {
            Lang::En => *en,
            Lang::Ru => *ru,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::texts;

    #[test]
    fn both_languages_have_every_flash_and_they_differ() {
        for (code, en, ru) in FLASHES {
            assert_eq!(flash_text(Lang::En, code), Some(en));
            assert_eq!(flash_text(Lang::Ru, code), Some(ru));
            assert_ne!(en, ru, "{code}");
        }
        assert_eq!(flash_text(Lang::En, "<script>"), None);
        assert_eq!(texts(Lang::Ru).lang, "ru");
        assert_eq!(texts(Lang::En).lang, "en");
    }
}
