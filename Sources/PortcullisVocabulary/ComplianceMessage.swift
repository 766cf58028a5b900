import Foundation

/// The user-facing title and message of a compliance status that is not compliant, in each `MessageLanguage`
/// (PROTOCOL §5, §16). A status carries the message's case as its `reason`, so that whoever shows it can show it in
/// the user's language: the server by `Accept-Language`, the client SDK by the device's preferred languages.
/// `{0}` in a text stands for the status's `reasonArgument` (a minimum version, an HTTP status).
public enum ComplianceMessage: String, Codable, Sendable, CaseIterable {
    case policyNotApplied, notTargeted, accountNotAllowed, anotherAccountManaged, jailbroken, osTooOld, appTooOld
    case pinRequiredInteractive, pinRequired, lapsed, wiped, wipedPartially, unenrolled, notEnrolled, enrollmentRemoved
    case deviceKeyUnavailable, networkFailure, serviceFailure, signInAgain, userCancelled

    /// The title and message in `language`, with `{0}` replaced by `argument`.
    public func text(_ language: MessageLanguage, argument: String? = nil) -> (title: String, message: String) {
        let entry = Self.catalogue[self]?[language] ?? Self.catalogue[self]?[.english] ?? ("", "")
        guard let argument else { return entry }
        return (entry.0.replacingOccurrences(of: "{0}", with: argument), entry.1.replacingOccurrences(of: "{0}", with: argument))
    }

    typealias Entry = (String, String)

    // Every case has all five languages: ComplianceMessageTests checks it.
    static let catalogue: [ComplianceMessage: [MessageLanguage: Entry]] = [
        .policyNotApplied: [
            .english: (
                "Protection policy not applied",
                "This app has not applied your organization's protection policy yet. Open the app again to finish setting it up."
            ),
            .spanish: (
                "Directiva de protección no aplicada",
                "Esta aplicación aún no ha aplicado la directiva de protección de su organización. Vuelva a abrir la aplicación para terminar de configurarla."
            ),
            .portuguese: (
                "Política de proteção não aplicada",
                "Este aplicativo ainda não aplicou a política de proteção da sua organização. Abra o aplicativo novamente para concluir a configuração."
            ),
            .italian: (
                "Criterio di protezione non applicato",
                "Questa app non ha ancora applicato il criterio di protezione dell'organizzazione. Riapri l'app per completare la configurazione."
            ),
            .chinese: ("未应用保护策略", "此应用尚未应用你组织的保护策略。请重新打开应用以完成设置。"),
        ],
        .notTargeted: [
            .english: (
                "Account not protected",
                "Your organization requires app protection for this account, but no app protection policy is assigned to it for this app. Contact your IT administrator."
            ),
            .spanish: (
                "Cuenta no protegida",
                "Su organización exige protección de aplicaciones para esta cuenta, pero no tiene asignada ninguna directiva de protección para esta aplicación. Póngase en contacto con el administrador de TI."
            ),
            .portuguese: (
                "Conta não protegida",
                "Sua organização exige proteção de aplicativos para esta conta, mas nenhuma política de proteção está atribuída a ela para este aplicativo. Entre em contato com o administrador de TI."
            ),
            .italian: (
                "Account non protetto",
                "L'organizzazione richiede la protezione delle app per questo account, ma non gli è assegnato alcun criterio di protezione per questa app. Contatta l'amministratore IT."
            ),
            .chinese: ("帐户未受保护", "你的组织要求此帐户使用应用保护，但尚未为此应用向该帐户分配应用保护策略。请联系 IT 管理员。"),
        ],
        .accountNotAllowed: [
            .english: (
                "Account not allowed",
                "Your organization does not allow this account to be used with this app. Sign in with an allowed work account."
            ),
            .spanish: (
                "Cuenta no permitida",
                "Su organización no permite usar esta cuenta con esta aplicación. Inicie sesión con una cuenta profesional permitida."
            ),
            .portuguese: (
                "Conta não permitida",
                "Sua organização não permite que esta conta seja usada com este aplicativo. Entre com uma conta corporativa permitida."
            ),
            .italian: (
                "Account non consentito",
                "L'organizzazione non consente di usare questo account con questa app. Accedi con un account aziendale consentito."
            ),
            .chinese: ("不允许使用此帐户", "你的组织不允许在此应用中使用此帐户。请使用允许的工作帐户登录。"),
        ],
        .anotherAccountManaged: [
            .english: (
                "Another work account is signed in",
                "This app can protect one work account at a time. Remove the other work account from this app, then try again."
            ),
            .spanish: (
                "Ya hay otra cuenta profesional",
                "Esta aplicación solo puede proteger una cuenta profesional a la vez. Quite la otra cuenta profesional de esta aplicación y vuelva a intentarlo."
            ),
            .portuguese: (
                "Outra conta corporativa está conectada",
                "Este aplicativo pode proteger uma conta corporativa por vez. Remova a outra conta corporativa deste aplicativo e tente novamente."
            ),
            .italian: (
                "È già connesso un altro account aziendale",
                "Questa app può proteggere un solo account aziendale alla volta. Rimuovi l'altro account aziendale da questa app, quindi riprova."
            ),
            .chinese: ("已登录另一个工作帐户", "此应用一次只能保护一个工作帐户。请从此应用中删除另一个工作帐户，然后重试。"),
        ],
        .jailbroken: [
            .english: ("Device not supported", "Your organization's data cannot be used on a jailbroken or rooted device."),
            .spanish: ("Dispositivo no compatible", "Los datos de su organización no se pueden usar en un dispositivo con jailbreak o rooteado."),
            .portuguese: ("Dispositivo sem suporte", "Os dados da sua organização não podem ser usados em um dispositivo desbloqueado (jailbreak ou root)."),
            .italian: ("Dispositivo non supportato", "I dati dell'organizzazione non possono essere usati su un dispositivo con jailbreak o root."),
            .chinese: ("不支持此设备", "无法在已越狱或已取得 root 权限的设备上使用你组织的数据。"),
        ],
        .osTooOld: [
            .english: ("Update your device", "Your organization requires operating system version {0} or later. Update your device, then try again."),
            .spanish: (
                "Actualice el dispositivo",
                "Su organización exige la versión {0} o posterior del sistema operativo. Actualice el dispositivo y vuelva a intentarlo."
            ),
            .portuguese: (
                "Atualize o dispositivo",
                "Sua organização exige o sistema operacional na versão {0} ou posterior. Atualize o dispositivo e tente novamente."
            ),
            .italian: (
                "Aggiorna il dispositivo",
                "L'organizzazione richiede il sistema operativo versione {0} o successiva. Aggiorna il dispositivo, quindi riprova."
            ),
            .chinese: ("请更新设备", "你的组织要求操作系统版本为 {0} 或更高。请更新设备，然后重试。"),
        ],
        .appTooOld: [
            .english: ("Update this app", "Your organization requires version {0} or later of this app. Update the app, then try again."),
            .spanish: (
                "Actualice esta aplicación",
                "Su organización exige la versión {0} o posterior de esta aplicación. Actualice la aplicación y vuelva a intentarlo."
            ),
            .portuguese: (
                "Atualize este aplicativo",
                "Sua organização exige a versão {0} ou posterior deste aplicativo. Atualize o aplicativo e tente novamente."
            ),
            .italian: ("Aggiorna questa app", "L'organizzazione richiede la versione {0} o successiva di questa app. Aggiorna l'app, quindi riprova."),
            .chinese: ("请更新此应用", "你的组织要求此应用的版本为 {0} 或更高。请更新应用，然后重试。"),
        ],
        .pinRequiredInteractive: [
            .english: ("PIN required", "Your organization requires a PIN for this app. Set a PIN to continue."),
            .spanish: ("PIN obligatorio", "Su organización exige un PIN para esta aplicación. Establezca un PIN para continuar."),
            .portuguese: ("PIN obrigatório", "Sua organização exige um PIN para este aplicativo. Defina um PIN para continuar."),
            .italian: ("PIN obbligatorio", "L'organizzazione richiede un PIN per questa app. Imposta un PIN per continuare."),
            .chinese: ("需要 PIN", "你的组织要求此应用使用 PIN。请设置 PIN 以继续。"),
        ],
        .pinRequired: [
            .english: ("PIN required", "Your organization requires a PIN for this app, and none is set."),
            .spanish: ("PIN obligatorio", "Su organización exige un PIN para esta aplicación y no se ha establecido ninguno."),
            .portuguese: ("PIN obrigatório", "Sua organização exige um PIN para este aplicativo, e nenhum foi definido."),
            .italian: ("PIN obbligatorio", "L'organizzazione richiede un PIN per questa app e non ne è stato impostato nessuno."),
            .chinese: ("需要 PIN", "你的组织要求此应用使用 PIN，但尚未设置 PIN。"),
        ],
        .lapsed: [
            .english: (
                "Compliance check overdue",
                "This app has not checked in with your organization for too long. Connect to the network and open the app to check in again."
            ),
            .spanish: (
                "Comprobación de cumplimiento atrasada",
                "Esta aplicación lleva demasiado tiempo sin comunicarse con su organización. Conéctese a la red y abra la aplicación para volver a registrarse."
            ),
            .portuguese: (
                "Verificação de conformidade atrasada",
                "Este aplicativo está há muito tempo sem se comunicar com sua organização. Conecte-se à rede e abra o aplicativo para fazer o check-in novamente."
            ),
            .italian: (
                "Verifica di conformità scaduta",
                "Questa app non si collega all'organizzazione da troppo tempo. Connettiti alla rete e apri l'app per eseguire di nuovo la verifica."
            ),
            .chinese: ("合规性检查已逾期", "此应用已太久未向你的组织签入。请连接网络并打开应用以重新签入。"),
        ],
        .wiped: [
            .english: ("Work data removed", "Your organization removed its data from this app for this account."),
            .spanish: ("Datos profesionales eliminados", "Su organización eliminó sus datos de esta aplicación para esta cuenta."),
            .portuguese: ("Dados corporativos removidos", "Sua organização removeu os dados dela deste aplicativo para esta conta."),
            .italian: ("Dati aziendali rimossi", "L'organizzazione ha rimosso i propri dati da questa app per questo account."),
            .chinese: ("已删除工作数据", "你的组织已从此应用中删除此帐户的组织数据。"),
        ],
        .wipedPartially: [
            .english: ("Work data removed", "Your organization removed its data from this app; some files may remain."),
            .spanish: ("Datos profesionales eliminados", "Su organización eliminó sus datos de esta aplicación; es posible que queden algunos archivos."),
            .portuguese: ("Dados corporativos removidos", "Sua organização removeu os dados dela deste aplicativo; alguns arquivos podem permanecer."),
            .italian: ("Dati aziendali rimossi", "L'organizzazione ha rimosso i propri dati da questa app; alcuni file potrebbero essere rimasti."),
            .chinese: ("已删除工作数据", "你的组织已从此应用中删除其数据；部分文件可能仍然存在。"),
        ],
        .unenrolled: [
            .english: ("Account removed", "This account is no longer protected in this app."),
            .spanish: ("Cuenta quitada", "Esta cuenta ya no está protegida en esta aplicación."),
            .portuguese: ("Conta removida", "Esta conta não está mais protegida neste aplicativo."),
            .italian: ("Account rimosso", "Questo account non è più protetto in questa app."),
            .chinese: ("已删除帐户", "此帐户在此应用中不再受保护。"),
        ],
        .notEnrolled: [
            .english: ("Not enrolled", "This account is not enrolled in this app."),
            .spanish: ("No inscrita", "Esta cuenta no está inscrita en esta aplicación."),
            .portuguese: ("Não registrada", "Esta conta não está registrada neste aplicativo."),
            .italian: ("Non registrato", "Questo account non è registrato in questa app."),
            .chinese: ("未注册", "此帐户未在此应用中注册。"),
        ],
        .enrollmentRemoved: [
            .english: ("Enrollment removed", "This app's enrollment was removed. Open the app again to protect it."),
            .spanish: ("Inscripción eliminada", "Se eliminó la inscripción de esta aplicación. Vuelva a abrir la aplicación para protegerla."),
            .portuguese: ("Registro removido", "O registro deste aplicativo foi removido. Abra o aplicativo novamente para protegê-lo."),
            .italian: ("Registrazione rimossa", "La registrazione di questa app è stata rimossa. Riapri l'app per proteggerla."),
            .chinese: ("注册已删除", "此应用的注册已被删除。请重新打开应用以保护它。"),
        ],
        .deviceKeyUnavailable: [
            .english: ("Device key unavailable", "This app cannot use its protected key store. Restart the app and try again."),
            .spanish: (
                "Clave del dispositivo no disponible",
                "Esta aplicación no puede usar su almacén de claves protegido. Reinicie la aplicación y vuelva a intentarlo."
            ),
            .portuguese: (
                "Chave do dispositivo indisponível",
                "Este aplicativo não consegue usar seu repositório de chaves protegido. Reinicie o aplicativo e tente novamente."
            ),
            .italian: (
                "Chiave del dispositivo non disponibile",
                "Questa app non riesce a usare il proprio archivio di chiavi protetto. Riavvia l'app e riprova."
            ),
            .chinese: ("设备密钥不可用", "此应用无法使用其受保护的密钥存储。请重新启动应用，然后重试。"),
        ],
        .networkFailure: [
            .english: ("No connection", "The app cannot reach your organization's service. Check the connection and try again."),
            .spanish: ("Sin conexión", "La aplicación no puede comunicarse con el servicio de su organización. Compruebe la conexión y vuelva a intentarlo."),
            .portuguese: ("Sem conexão", "O aplicativo não consegue acessar o serviço da sua organização. Verifique a conexão e tente novamente."),
            .italian: ("Nessuna connessione", "L'app non riesce a raggiungere il servizio dell'organizzazione. Controlla la connessione e riprova."),
            .chinese: ("无网络连接", "应用无法连接到你组织的服务。请检查网络连接，然后重试。"),
        ],
        .serviceFailure: [
            .english: ("Service unavailable", "Your organization's compliance service did not answer (HTTP {0}). Try again later."),
            .spanish: ("Servicio no disponible", "El servicio de cumplimiento de su organización no respondió (HTTP {0}). Vuelva a intentarlo más tarde."),
            .portuguese: ("Serviço indisponível", "O serviço de conformidade da sua organização não respondeu (HTTP {0}). Tente novamente mais tarde."),
            .italian: ("Servizio non disponibile", "Il servizio di conformità dell'organizzazione non ha risposto (HTTP {0}). Riprova più tardi."),
            .chinese: ("服务不可用", "你组织的合规性服务未响应 (HTTP {0})。请稍后重试。"),
        ],
        .signInAgain: [
            .english: ("Sign in again", "Sign in to your work account again to finish protecting this app."),
            .spanish: ("Vuelva a iniciar sesión", "Vuelva a iniciar sesión en su cuenta profesional para terminar de proteger esta aplicación."),
            .portuguese: ("Entre novamente", "Entre novamente na sua conta corporativa para concluir a proteção deste aplicativo."),
            .italian: ("Accedi di nuovo", "Accedi di nuovo all'account aziendale per completare la protezione di questa app."),
            .chinese: ("请重新登录", "请重新登录你的工作帐户以完成对此应用的保护。"),
        ],
        .userCancelled: [
            .english: ("Setup cancelled", "You cancelled protecting this app. Your organization's data stays unavailable until you finish."),
            .spanish: (
                "Configuración cancelada",
                "Canceló la protección de esta aplicación. Los datos de su organización no estarán disponibles hasta que la termine."
            ),
            .portuguese: (
                "Configuração cancelada",
                "Você cancelou a proteção deste aplicativo. Os dados da sua organização ficam indisponíveis até você concluir."
            ),
            .italian: (
                "Configurazione annullata",
                "Hai annullato la protezione di questa app. I dati dell'organizzazione restano non disponibili finché non la completi."
            ),
            .chinese: ("已取消设置", "你已取消保护此应用。在你完成之前，你组织的数据将不可用。"),
        ],
    ]
}
