//! Every string the console shows, in English and Russian. The language is the hosted pages'
//! choice from `Accept-Language` ([`web_edge::negotiate`]).

mod flashes;

pub(crate) use flashes::flash_text;
use web_edge::Lang;

/// Declares [`Texts`] and its two tables, each field's English and Russian side by side.
macro_rules! texts {
    ($($field:ident: $en:expr, $ru:expr;)*) => {
        /// Every string of the console in one language.
        pub(crate) struct Texts {
            $(pub $field: &'static str,)*
        }

        const EN: Texts = Texts { $($field: $en,)* };
        const RU: Texts = Texts { $($field: $ru,)* };
    };
}

/// The console's strings in `lang`.
pub(crate) fn texts(lang: Lang) -> &'static Texts {
    match lang {
        Lang::En => &EN,
        Lang::Ru => &RU,
    }
}

texts! {
    lang: "en", "ru";
    brand: "Gateway console", "Консоль шлюза";
    times_in: "Times in", "Время указано в поясе";
    sign_out: "Sign out", "Выйти";
    role_viewer: "viewer", "наблюдатель";
    role_operator: "operator", "оператор";
    role_admin: "admin", "администратор";

    nav_overview: "Overview", "Обзор";
    nav_operations: "Operations", "Операции";
    nav_callbacks: "Callbacks", "Колбэки";
    nav_merchants: "Merchants", "Мерчанты";
    nav_routes: "Routes", "Маршруты";
    nav_providers: "Providers", "Провайдеры";
    nav_tariffs: "Tariffs", "Тарифы";
    nav_disputes: "Disputes", "Споры";
    nav_statements: "Statements", "Выписки";
    nav_audit: "Audit log", "Журнал аудита";

    signin_title: "Sign in", "Вход";
    signin_name: "Name", "Имя";
    signin_password: "Password", "Пароль";
    signin_button: "Sign in", "Войти";
    signin_wrong: "Wrong name or password.", "Неверное имя или пароль.";
    signin_too_many: "Too many failed attempts for this name. Wait a minute and try again.",
        "Слишком много неудачных попыток для этого имени. Подождите минуту и попробуйте снова.";
    signin_again: "Sign in again", "Войти снова";

    bad_request_title: "The request could not be read", "Не удалось прочитать запрос";
    bad_request_hint: "Nothing was changed. What is wrong:", "Ничего не изменено. Что не так:";
    forbidden_title: "Not allowed", "Нет доступа";
    forbidden_hint: "Your role is", "Ваша роль —";
    forbidden_needs: "This needs at least", "Для этого нужна роль не ниже";
    bad_token_title: "The form has expired", "Форма устарела";
    bad_token_hint: "Nothing was changed. Reload the page and send the form again.",
        "Ничего не изменено. Обновите страницу и отправьте форму ещё раз.";
    signed_out_title: "You are not signed in", "Вы не вошли в систему";
    not_found_title: "Not found", "Не найдено";
    not_found_hint: "There is nothing at this address.", "По этому адресу ничего нет.";
    unavailable_title: "Temporarily unavailable", "Временно недоступно";
    unavailable_hint: "The database cannot be reached. Nothing was changed; try again in a minute.",
        "База данных недоступна. Ничего не изменено; попробуйте через минуту.";
    busy_hint: "Too many sign-ins at once. Nothing was checked; try again in a few seconds.",
        "Слишком много входов одновременно. Ничего не проверено; попробуйте через несколько секунд.";
    unaudited_title: "Done, but not in the audit log", "Сделано, но не записано в журнал аудита";
    unaudited_hint: "The change was made, but its audit entry could not be written. Do not repeat it; check the page first. The error is logged under the reference",
        "Изменение сделано, но запись аудита не сохранилась. Не повторяйте его; сначала проверьте страницу. Ошибка записана в журнал под кодом";
    internal_title: "Something went wrong", "Что-то пошло не так";
    internal_hint: "The error is logged under the reference", "Ошибка записана в журнал под кодом";
    method_title: "Method not allowed", "Метод не разрешён";
    method_hint: "This address takes", "Этот адрес принимает";
    back_to_console: "Back to the overview", "Вернуться к обзору";

    status_approved: "Approved", "Одобрена";
    status_declined: "Declined", "Отклонена";
    status_processing: "Processing", "В обработке";
    deposit: "Deposit", "Пополнение";
    withdrawal: "Withdrawal", "Выплата";
    enabled: "enabled", "включён";
    disabled: "disabled", "выключен";
    enable: "Enable", "Включить";
    disable: "Disable", "Выключить";
    apply: "Apply", "Применить";
    reset: "Reset", "Сбросить";
    any: "any", "любой";
    nothing_found: "Nothing found.", "Ничего не найдено.";

    col_direction: "Direction", "Направление";
    col_method: "Method", "Метод";
    col_status: "Status", "Статус";
    col_count: "Count", "Количество";
    col_amount: "Amount", "Сумма";
    col_refunded: "Refunded", "Возвращено";
    col_merchant: "Merchant", "Мерчант";
    col_merchant_operation: "merchantOperationId", "merchantOperationId";
    col_operation: "Operation", "Операция";
    col_provider: "Provider", "Провайдер";
    col_error: "Error", "Ошибка";
    col_created: "Created", "Создана";
    col_updated: "Updated", "Изменена";
    col_time: "Time", "Время";
    col_event: "Event", "Событие";
    col_detail: "Details", "Подробности";
    col_refund: "Refund", "Возврат";
    col_attempts: "Attempts", "Попытки";
    col_latency: "Latency", "Задержка";
    col_state: "State", "Состояние";
    col_kind: "Kind", "Вид";
    col_name: "Name", "Название";
    col_methods: "Methods", "Методы";
    col_actions: "Actions", "Действия";

    tile_today: "operations today", "операций сегодня";
    tile_approval: "approval rate today", "доля одобренных сегодня";
    tile_callbacks_pending: "callbacks pending", "колбэков в очереди";
    tile_callbacks_held: "callbacks held (merchant disabled)", "колбэков удержано (мерчант выключен)";
    tile_callbacks_failed: "callbacks failed", "колбэков не доставлено";
    tile_stuck: "processing for over 24 h", "в обработке дольше 24 ч";
    tile_discrepancies: "open discrepancies", "открытых расхождений";
    tile_fee_income: "fee income today", "доход от комиссий сегодня";
    tile_ledger: "ledger mismatches at the last check,", "расхождений баланса и проводок при проверке";
    tile_ledger_never: "the ledger was never checked", "проверка проводок ещё не запускалась";
    verify_now: "Verify now", "Проверить сейчас";
    today_since: "Today, since", "Сегодня, с";
    today_detail: "Today by direction, method and status", "Сегодня по направлению, методу и статусу";
    none_today: "No operations today.", "Сегодня операций нет.";
    chart_per_minute: "Operations per minute, last hour", "Операций в минуту за последний час";
    chart_approval: "Approval rate per method, last 24 hours", "Доля одобренных по методам за 24 часа";
    chart_no_final: "No final operations in the last 24 hours.", "За последние 24 часа завершённых операций нет.";

    filter_from: "Created from", "Создана с";
    filter_to: "Created before", "Создана до";
    filter_search: "operationId or merchantOperationId", "operationId или merchantOperationId";
    filter_search_hint: "exact value", "точное значение";
    filter_limit: "Per page", "На странице";
    export_csv: "Export CSV", "Выгрузить CSV";
    next_page: "Next page →", "Следующая страница →";
    first_page: "← First page", "← Первая страница";

    operation: "Operation", "Операция";
    api_view: "As the API shows it", "Как её показывает API";
    gateway_record: "Gateway record", "Запись шлюза";
    refunds: "Refunds", "Возвраты";
    timeline: "Timeline", "Хронология";
    callbacks: "Callbacks", "Колбэки";
    attempts: "Provider attempts", "Попытки у провайдеров";
    ledger_entries: "Ledger entries", "Проводки";
    route: "route", "маршрут";
    expires_at: "Expires", "Истекает";
    due_at: "Due", "Срок";
    provider_state: "Provider state", "Состояние у провайдера";
    acquirer_id: "Acquirer id", "Id у эквайера";
    available: "Available", "Доступно";
    held: "Held", "Заморожено";
    retry_callback: "Retry callback", "Повторить колбэк";
    send_now: "Send now", "Отправить сейчас";
    cancel_at_provider: "Cancel at the provider", "Отменить у провайдера";
    sandbox: "Sandbox", "Песочница";
    approve: "Approve", "Одобрить";
    decline: "Decline", "Отклонить";
    no_events: "No events recorded.", "Событий нет.";
    no_callbacks: "No callback was queued.", "Колбэки не ставились в очередь.";
    no_attempts: "No provider attempts recorded.", "Попыток у провайдеров нет.";
    no_ledger: "No ledger entries.", "Проводок нет.";
    event_created: "Created", "Создана";
    event_status: "Status", "Статус";
    event_attempt: "Provider attempt", "Попытка у провайдера";
    event_refund: "Refund", "Возврат";
    event_discrepancy: "Discrepancy", "Расхождение";
    event_discrepancy_resolved: "Discrepancy resolved", "Расхождение урегулировано";
    event_callback: "Callback attempt", "Попытка колбэка";
    event_dispute: "Dispute", "Спор";
    read_from_replica: "Read from the replica; it was behind the primary by",
        "Прочитано с реплики; её отставание от основного сервера —";
    evidence: "evidence", "доказательства";
    waits_for: "waits for", "ждёт";
    no_answer: "no answer", "нет ответа";
    cb_pending: "pending", "в очереди";
    cb_delivered: "delivered", "доставлен";
    cb_failed: "failed", "не доставлен";
    cb_held: "held", "удержан";
    held_hint: "its merchant is disabled; enabling the merchant sends it",
        "мерчант выключен; колбэк уйдёт, когда мерчанта включат";
    queued_at: "Queued", "Поставлен в очередь";
    next_attempt: "Next attempt", "Следующая попытка";
    last_error: "Last error", "Последняя ошибка";
    no_open_callbacks: "No callbacks are pending, held or failed.",
        "Нет колбэков в очереди, удержанных или с ошибкой.";

    discrepancies: "Discrepancies", "Расхождения";
    reported: "Reported", "Сообщено";
    discrepancy_open: "open", "открыто";
    discrepancy_resolved: "resolved", "урегулировано";
    resolution: "Resolution", "Урегулирование";
    resolve: "Mark resolved", "Отметить урегулированным";
    note: "Note", "Примечание";
    ledger_entry: "ledger entry", "проводка";

    credit: "Credit", "Зачислить";
    debit: "Debit", "Списать";
    currency: "Currency", "Валюта";
    reason: "Reason", "Причина";
    operation_optional: "operationId (optional)", "operationId (необязательно)";

    min_amount: "Min", "Мин.";
    max_amount: "Max", "Макс.";
    priority: "Priority", "Приоритет";
    set_priority: "Set", "Задать";
    flow: "Flow", "Сценарий";
    lifetime: "Lifetime", "Время жизни";

    no_acquirers: "No acquirers are configured.", "Эквайеры не настроены.";
    timeout: "Timeout", "Таймаут";
    insecure: "insecure", "без TLS";
    circuit: "Circuit at", "Автомат в";
    circuits: "Circuits", "Автоматы";
    circuit_closed: "closed", "замкнут";
    circuit_open: "open", "разомкнут";
    circuit_half_open: "half-open", "полуразомкнут";
    failures: "failures", "сбоев";
    until: "until", "до";
    trial_running: "trial under way", "идёт пробный вызов";
    not_called: "not called", "не вызывался";
    processes: "Serving processes (reported in the last 15 s)", "Рабочие процессы (отчитались за 15 с)";
    no_processes: "No process reported in the last 15 seconds.", "За последние 15 секунд ни один процесс не отчитался.";
    version: "Version", "Версия";
    started: "Started", "Запущен";
    seen: "Last report", "Последний отчёт";

    actor: "Who", "Кто";
    action: "Action", "Действие";
    target: "Target", "Объект";
    before: "Before", "До";
    after: "After", "После";
    newest: "← Newest", "← Самые новые";
    older: "Older →", "Более ранние →";

    percent: "Percent", "Процент";
    fixed: "Fixed", "Фикс.";
    set_tariff: "Set a tariff", "Задать тариф";
    set_tariff_hint: "Sets the whole tariff of the merchant, direction, method and currency, replacing one there: an empty percent or fixed part is 0, an empty min or max is none. Amounts in the currency's form (10.00).",
        "Задаёт тариф мерчанта для направления, метода и валюты целиком, заменяя прежний: пустой процент или фиксированная часть — 0, пустые мин. и макс. — без ограничения. Суммы в форме валюты (10.00).";
    set: "Set", "Задать";
    remove: "Remove", "Удалить";
    no_tariffs: "No tariffs: no operation pays a fee.", "Тарифов нет: операции не платят комиссию.";
    no_disputes: "No disputes.", "Споров нет.";
    dispute: "Dispute", "Спор";
    disputes: "Disputes", "Споры";
    dispute_kind: "Kind", "Вид";
    due_by: "Evidence due by", "Доказательства до";
    comment: "Comment", "Комментарий";
    files: "Files", "Файлы";
    no_files: "No files.", "Файлов нет.";
    file_name: "File name", "Имя файла";
    file_type: "Type", "Тип";
    file_size: "Bytes", "Байт";
    decide_appeal: "Decide the appeal", "Решение по апелляции";
    decide_appeal_hint: "Accepting credits the amount less the fee of the deposit's own tariff; rejecting moves nothing. Either is final.", "Принятие зачисляет сумму за вычетом комиссии по тарифу самого депозита; отклонение ничего не двигает. Решение окончательное.";
    accept: "Accept", "Принять";
    reject: "Reject", "Отклонить";

    statement_of: "Statement of", "Выписка";
    date_from: "From", "С";
    date_to: "To", "По";
    show: "Show", "Показать";
    download_csv: "Download CSV", "Скачать CSV";
    opening: "Opening balance", "Входящий остаток";
    closing: "Closing balance", "Исходящий остаток";
    days_in: "Days in", "Дни по поясу";
    col_date: "Date", "Дата";
    deposits: "Deposits", "Пополнения";
    withdrawals: "Withdrawals", "Выплаты";
    col_fee: "Fee", "Комиссия";
    manual: "Manual", "Ручные";
    closing_available: "Closing available", "Доступно на конец";
    closing_held: "Closing held", "Заморожено на конец";
    pick_merchant: "Choose a merchant, a currency and the days.", "Выберите мерчанта, валюту и дни.";
}
